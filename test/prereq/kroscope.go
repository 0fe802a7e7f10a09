package prereq

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var kroscope struct {
	once sync.Once
	path string
	out  []byte
	err  error
}

// Kroscope builds cmd/kroscope once per test binary (the first caller pays
// the build) and returns its path; later calls reuse it. The binary is
// removed when the test binary exits only if TestMain calls Cleanup.
func Kroscope(t testing.TB) string {
	t.Helper()
	k := &kroscope
	k.once.Do(func() {
		dir, err := os.MkdirTemp("", "kroscope-bin-")
		if err != nil {
			k.err = err
			return
		}
		k.path = filepath.Join(dir, "kroscope")
		cmd := exec.Command("go", "build", "-o", k.path, "./cmd/kroscope")
		cmd.Dir = RepoRoot()
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		k.out, k.err = cmd.CombinedOutput()
	})
	if k.err != nil {
		t.Fatalf("building kroscope: %v\n%s", k.err, k.out)
	}
	return k.path
}

// Cleanup removes what this package made for the test binary (the kroscope
// build); TestMain calls it after m.Run.
func Cleanup() {
	if kroscope.path != "" {
		_ = os.RemoveAll(filepath.Dir(kroscope.path))
	}
}
