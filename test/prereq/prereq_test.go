package prereq

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestKroVersion(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(RepoRoot(), "hack", "kro", "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	pinned := strings.TrimSpace(string(b))
	for _, tt := range []struct {
		version, dir  string
		want, wantDir string
	}{
		{"", "", pinned, filepath.Join(RepoRoot(), "bin", "kro", pinned)},
		{"v0.9.3", "", "v0.9.3", filepath.Join(RepoRoot(), "bin", "kro", "v0.9.3")},
		{"", "/x/kro/v0.8.0", "v0.8.0", "/x/kro/v0.8.0"},
	} {
		t.Setenv(KroVersionEnv, tt.version)
		t.Setenv(KroDirEnv, tt.dir)
		if got := KroVersion(); got != tt.want {
			t.Errorf("KRO_VERSION=%q KROSCOPE_KRO_DIR=%q: KroVersion() = %q, want %q", tt.version, tt.dir, got, tt.want)
		}
		if got := KroDir(); got != tt.wantDir {
			t.Errorf("KRO_VERSION=%q KROSCOPE_KRO_DIR=%q: KroDir() = %q, want %q", tt.version, tt.dir, got, tt.wantDir)
		}
	}
}

// TestMissingSkipsOrFailsInCI: outside CI a missing prerequisite skips with
// the marker, what is missing and the build command; under CI=true it fails.
func TestMissingSkipsOrFailsInCI(t *testing.T) {
	t.Setenv(KroDirEnv, filepath.Join(t.TempDir(), "nothing"))
	for _, ci := range []string{"", "true"} {
		t.Setenv("CI", ci)
		ft := &fakeTB{TB: t}
		func() {
			defer func() { _ = recover() }()
			KroController(ft)
		}()
		wantSkip := ci != "true"
		if ft.skipped != wantSkip || ft.failed == wantSkip {
			t.Errorf("CI=%q: skipped %v failed %v, want skipped %v", ci, ft.skipped, ft.failed, wantSkip)
		}
		for _, want := range []string{Marker, "controller", BuildCommand, KroDirEnv} {
			if !strings.Contains(ft.msg, want) {
				t.Errorf("CI=%q: message %q does not name %q", ci, ft.msg, want)
			}
		}
	}
}

// fakeTB records Skip and Fatal instead of ending the test.
type fakeTB struct {
	testing.TB
	msg             string
	skipped, failed bool
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Skip(args ...any) {
	f.msg, f.skipped = fmt.Sprint(args...), true
	panic("skipped")
}
func (f *fakeTB) Fatal(args ...any) {
	f.msg, f.failed = fmt.Sprint(args...), true
	panic("failed")
}
