package tui

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestReadmeKeysNameEveryAction: the README's key table lists exactly the
// config names the action tables have.
func TestReadmeKeysNameEveryAction(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	start, end := strings.Index(s, "## Keys\n"), strings.Index(s, "## Configuration\n")
	if start < 0 || end < start {
		t.Fatal("README has no Keys section before Configuration")
	}
	var listed []string
	tick := regexp.MustCompile("`([^`]+)`")
	for _, l := range strings.Split(s[start:end], "\n") {
		cells := strings.Split(l, "|")
		if len(cells) < 5 || !strings.HasPrefix(l, "| `") {
			continue
		}
		for _, m := range tick.FindAllStringSubmatch(cells[3], -1) {
			listed = append(listed, m[1])
		}
	}
	names := ActionNames()
	for _, n := range names {
		if !slices.Contains(listed, n) {
			t.Errorf("README's key table does not name action %q", n)
		}
	}
	for _, n := range listed {
		if !slices.Contains(names, n) {
			t.Errorf("README's key table names %q, which is no action", n)
		}
	}
}
