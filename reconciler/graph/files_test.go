package graph

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// loadWithin loads paths with l and fails when loading takes longer than
// 10s (a FIFO blocks an open forever).
func loadWithin(t *testing.T, l Loader, paths ...string) ([]*ResourceGraphDefinition, error) {
	t.Helper()
	type result struct {
		rgds []*ResourceGraphDefinition
		err  error
	}
	done := make(chan result, 1)
	go func() {
		rgds, err := l.Load(paths...)
		done <- result{rgds, err}
	}()
	select {
	case r := <-done:
		return r.rgds, r.err
	case <-time.After(10 * time.Second):
		t.Fatal("loading did not finish in 10s")
		return nil, nil
	}
}

func names(rgds []*ResourceGraphDefinition) string {
	var out []string
	for _, r := range rgds {
		out = append(out, r.Name)
	}
	return strings.Join(out, " ")
}

// TestLoadSkipsWhatIsNotARegularFile: a FIFO (in a folder or given by
// name) and a device are skipped with a warning instead of blocking or
// reading forever; the valid file beside them is loaded.
func TestLoadSkipsWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "good.yaml"), rgdYAML(Kind, "good"))
	fifo := filepath.Join(dir, "pipe.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	var warned []string
	l := Loader{Warn: func(path, why string) { warned = append(warned, path+": "+why) }}
	rgds, err := loadWithin(t, l, dir, fifo, "/dev/zero")
	if err != nil {
		t.Fatal(err)
	}
	if names(rgds) != "good" {
		t.Errorf("loaded %q, want good", names(rgds))
	}
	want := []string{fifo + ": skipped: a FIFO", fifo + ": skipped: a FIFO", "/dev/zero: skipped: a device"}
	if len(warned) != len(want) {
		t.Errorf("warnings %q, want %q", warned, want)
	}
	for _, w := range want {
		if !strings.Contains(strings.Join(warned, "\n"), w) {
			t.Errorf("no warning %q in %q", w, warned)
		}
	}
}

// TestLoadFileSizeLimit: a file over the limit is an error naming it, the
// limit and the flag; the others are still loaded.
func TestLoadFileSizeLimit(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.yaml"), rgdYAML(Kind, "small"))
	big := filepath.Join(dir, "big.yaml")
	writeFile(t, big, rgdYAML(Kind, "big")+"# "+strings.Repeat("x", 4096)+"\n")
	rgds, err := loadWithin(t, Loader{MaxFileSize: 2048}, dir)
	if names(rgds) != "small" {
		t.Errorf("loaded %q, want small", names(rgds))
	}
	if err == nil || !strings.Contains(err.Error(), big) || !strings.Contains(err.Error(), "limit of 2048") || !strings.Contains(err.Error(), "--max-file-size") {
		t.Errorf("err = %v, want one naming %s, the limit and the flag", err, big)
	}
	if DefaultMaxFileSize != 10<<20 {
		t.Errorf("default limit %d, want 10 MiB", DefaultMaxFileSize)
	}
}

// TestLoadSymlinkLoopsAndBadPathsDoNotStopTheWalk: a folder symlinked
// into itself is walked once, a file symlink loop and an unreadable folder
// are errors for that path, and the valid siblings are loaded.
func TestLoadSymlinkLoopsAndBadPathsDoNotStopTheWalk(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "a.yaml"), rgdYAML(Kind, "alpha"))
	writeFile(t, filepath.Join(sub, "z.yaml"), rgdYAML(Kind, "zulu"))
	if err := os.Symlink(dir, filepath.Join(sub, "up")); err != nil {
		t.Fatal(err)
	}
	loopA, loopB := filepath.Join(dir, "loop-a.yaml"), filepath.Join(dir, "loop-b.yaml")
	if err := os.Symlink(loopB, loopA); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(loopA, loopB); err != nil {
		t.Fatal(err)
	}
	locked := filepath.Join(dir, "locked")
	if err := os.Mkdir(locked, 0o000); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(locked, 0o755) })
	rgds, err := loadWithin(t, Loader{}, dir)
	if names(rgds) != "alpha zulu" {
		t.Errorf("loaded %q, want alpha zulu (each once)", names(rgds))
	}
	if err == nil || !strings.Contains(err.Error(), loopA) {
		t.Errorf("err = %v, want the symlink loop %s named", err, loopA)
	}
	// As root every folder is readable: TestLoadUnreadablePathsAreErrorsForThatPath
	// checks unreadable paths as an unprivileged user.
	if os.Geteuid() != 0 && (err == nil || !strings.Contains(err.Error(), locked)) {
		t.Errorf("err = %v, want the unreadable folder %s named", err, locked)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
