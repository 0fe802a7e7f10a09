package krocontroller

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestTailKeepsTheLastLines(t *testing.T) {
	l := &tail{max: 3}
	for _, w := range []string{"one\ntw", "o\nthree\n", "four\nfi"} {
		if n, err := l.Write([]byte(w)); err != nil || n != len(w) {
			t.Fatalf("Write(%q) = %d, %v", w, n, err)
		}
	}
	l.add("--- marker")
	if got, want := l.lines(), []string{"three", "four", "--- marker", "fi"}; !slices.Equal(got, want) {
		t.Errorf("lines = %q, want %q", got, want)
	}
}

func TestBinaryVersionFromFolder(t *testing.T) {
	t.Setenv(BinaryEnv, filepath.Join("bin", "kro", "v0.9.3", "controller"))
	if v := BinaryVersion(); v != "v0.9.3" {
		t.Errorf("BinaryVersion() = %q, want v0.9.3", v)
	}
	t.Setenv(BinaryEnv, filepath.Join("somewhere", "kro-controller"))
	if v := BinaryVersion(); v != Version {
		t.Errorf("BinaryVersion() = %q, want the default %s", v, Version)
	}
}

func TestRequireSkipsWithTheBuildCommand(t *testing.T) {
	t.Setenv(BinaryEnv, filepath.Join(t.TempDir(), "missing"))
	t.Setenv("CI", "")
	var msg string
	ft := &fakeTB{TB: t, skip: func(s string) { msg = s }}
	func() {
		defer func() { _ = recover() }()
		Require(ft)
	}()
	if !strings.Contains(msg, BuildCommand) || !strings.Contains(msg, BinaryEnv) {
		t.Errorf("skip message %q does not name %q and %s", msg, BuildCommand, BinaryEnv)
	}
}

// fakeTB records Skip instead of ending the test.
type fakeTB struct {
	testing.TB
	skip func(string)
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Skip(args ...any) {
	f.skip(fmt.Sprint(args...))
	panic("skipped")
}
