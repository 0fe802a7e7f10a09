package tui

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// keyRows reads the key tables of a Markdown file (headed "| key | action
// | config name |"): per row, the keys of the first column and the config
// names of the third.
func keyRows(t *testing.T, path string) (keys, names [][]string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tick := regexp.MustCompile("`([^`]+)`")
	in := false
	for _, l := range strings.Split(string(b), "\n") {
		if l == "| key | action | config name |" {
			in = true
			continue
		}
		cells := strings.Split(l, "|")
		if !in || !strings.HasPrefix(l, "|") {
			in = false
			continue
		}
		if len(cells) < 5 || !strings.HasPrefix(l, "| `") {
			continue
		}
		var k, n []string
		for _, m := range tick.FindAllStringSubmatch(cells[1], -1) {
			k = append(k, m[1])
		}
		for _, m := range tick.FindAllStringSubmatch(cells[3], -1) {
			n = append(n, m[1])
		}
		keys, names = append(keys, k), append(names, n)
	}
	return keys, names
}

// TestKeysDocNamesEveryAction: docs/keys.md's key table lists exactly the
// config names the action tables have.
func TestKeysDocNamesEveryAction(t *testing.T) {
	_, rows := keyRows(t, "../docs/keys.md")
	listed := slices.Concat(rows...)
	names := ActionNames()
	for _, n := range names {
		if !slices.Contains(listed, n) {
			t.Errorf("docs/keys.md's key table does not name action %q", n)
		}
	}
	for _, n := range listed {
		if !slices.Contains(names, n) {
			t.Errorf("docs/keys.md's key table names %q, which is no action", n)
		}
	}
}

// TestReadmeKeysAreDefaults: the README's short key table names only
// actions, and each key it shows is a default key of one of its row's
// actions.
func TestReadmeKeysAreDefaults(t *testing.T) {
	keys, rows := keyRows(t, "../README.md")
	if len(rows) == 0 {
		t.Fatal("README has no key table")
	}
	glyph := strings.NewReplacer("↑", "up", "↓", "down", "←", "left", "→", "right")
	defaults := defaultKeys()
	for i, row := range rows {
		var bound []string
		for _, n := range row {
			ks, ok := defaults[n]
			if !ok {
				t.Errorf("README's key table names %q, which is no action", n)
			}
			bound = append(bound, ks...)
		}
		for _, k := range keys[i] {
			if k = glyph.Replace(k); !slices.Contains(bound, k) {
				t.Errorf("README's key table shows %q for %v, whose default keys are %v", k, row, bound)
			}
		}
	}
}
