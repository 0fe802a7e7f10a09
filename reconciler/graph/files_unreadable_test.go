package graph

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// unreadableChildEnv marks the re-executed test binary that runs
// TestLoadUnreadablePathsAreErrorsForThatPath's checks as an unprivileged user.
const unreadableChildEnv = "KROSCOPE_TEST_UNREADABLE_CHILD"

// nobody is the unprivileged user the checks run as when the tests run as
// root (CI does): root reads folders and files whatever their mode, so an
// unreadable path can only be made for someone else.
const nobody = 65534

// TestLoadUnreadablePathsAreErrorsForThatPath: an unreadable folder and an
// unreadable file are each an error naming that path, and the readable
// siblings are still loaded.
func TestLoadUnreadablePathsAreErrorsForThatPath(t *testing.T) {
	if os.Getenv(unreadableChildEnv) == "" && os.Geteuid() == 0 {
		rerunAsNobody(t)
		return
	}
	dir, err := os.MkdirTemp("", "kroscope-unreadable-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	writeFile(t, filepath.Join(dir, "a.yaml"), rgdYAML(Kind, "alpha"))
	lockedDir := filepath.Join(dir, "locked")
	if err := os.Mkdir(lockedDir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(lockedDir, "hidden.yaml"), rgdYAML("Hidden", "hidden"))
	if err := os.Chmod(lockedDir, 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(lockedDir, 0o755)
	lockedFile := filepath.Join(dir, "locked.yaml")
	writeFile(t, lockedFile, rgdYAML("Other", "other"))
	if err := os.Chmod(lockedFile, 0); err != nil {
		t.Fatal(err)
	}

	rgds, err := loadWithin(t, Loader{}, dir)
	if names(rgds) != "alpha" {
		t.Errorf("loaded %q, want alpha (the readable sibling)", names(rgds))
	}
	for _, p := range []string{lockedDir, lockedFile} {
		if err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("err = %v, want the unreadable path %s named", err, p)
		}
	}
}

// rerunAsNobody runs this test again in a copy of the test binary as the
// user nobody and fails with its output when it fails.
func rerunAsNobody(t *testing.T) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The build cache's folders are root's alone: copy the binary where
	// nobody may run it.
	bin, err := os.MkdirTemp("", "kroscope-graph-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(bin) })
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(bin, "graph.test")
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(exe, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestLoadUnreadablePathsAreErrorsForThatPath$", "-test.v")
	cmd.Env = append(os.Environ(), unreadableChildEnv+"=1", "TMPDIR="+os.TempDir())
	cmd.Dir = bin
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the checks as user %d failed: %v\n%s", nobody, err, out)
	}
	if !strings.Contains(string(out), "--- PASS: TestLoadUnreadablePathsAreErrorsForThatPath") {
		t.Fatalf("the checks as user %d did not run:\n%s", nobody, out)
	}
}
