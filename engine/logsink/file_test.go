package logsink

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "kroscope.log")
	f, err := OpenFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("one\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("new log file has mode %v, want 0600", perm)
	}

	// An existing file open to others is narrowed, and appended to.
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err = OpenFile(p)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("two\n")
	f.Close()
	b, _ := os.ReadFile(p)
	fi, _ = os.Stat(p)
	if string(b) != "one\ntwo\n" || fi.Mode().Perm() != 0o600 {
		t.Errorf("reopened log: %q mode %v, want both lines and 0600", b, fi.Mode().Perm())
	}

	// A symlink at the path is refused; its target is not touched.
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.log")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if f, err := OpenFile(link); err == nil {
		f.Close()
		t.Fatal("opened a log file through a symlink")
	} else if !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("refusal %q does not say it is a symbolic link", err)
	}
	// A dangling one too (it would create the target).
	dangling := filepath.Join(dir, "dangling.log")
	if err := os.Symlink(filepath.Join(dir, "created-through-link"), dangling); err != nil {
		t.Fatal(err)
	}
	if f, err := OpenFile(dangling); err == nil {
		f.Close()
		t.Fatal("opened a log file through a dangling symlink")
	}
	if _, err := os.Stat(filepath.Join(dir, "created-through-link")); err == nil {
		t.Error("the dangling symlink's target was created")
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("symlink target changed: %q", b)
	}

	// Not a regular file.
	if f, err := OpenFile(dir); err == nil {
		f.Close()
		t.Error("opened a directory as a log file")
	}
}
