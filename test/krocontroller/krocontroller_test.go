package krocontroller

import (
	"slices"
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
