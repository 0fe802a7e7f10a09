package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTroubleshootingQuotesRealMessages: every message docs/troubleshooting.md
// quotes in bold ("...", with ... for the part that varies) is kroscope's:
// each literal part is in the program's source, or in the message the
// program gives for it here (issue 27: it quoted a message that never
// appeared).
func TestTroubleshootingQuotesRealMessages(t *testing.T) {
	doc, err := os.ReadFile("../../docs/troubleshooting.md")
	if err != nil {
		t.Fatal(err)
	}
	var corpus strings.Builder
	for _, dir := range []string{"../../cmd", "../../engine", "../../reconciler", "../../tui", "../../headless", "../../demo"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			b, err := os.ReadFile(path)
			corpus.Write(b)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// Messages whose varying part comes from the system.
	corpus.WriteString(checkRGDPaths([]string{"/nonexistent"}).Error())
	text := strings.Join(strings.Fields(string(doc)), " ")
	quotes := regexp.MustCompile(`\*\*"(.+?)"\*\*`).FindAllStringSubmatch(text, -1)
	if len(quotes) < 4 {
		t.Fatalf("found %d quoted messages, want 4 or more", len(quotes))
	}
	for _, q := range quotes {
		for _, part := range strings.Split(q[1], "...") {
			if part = strings.TrimSpace(part); part != "" && !strings.Contains(corpus.String(), part) {
				t.Errorf("docs/troubleshooting.md quotes %q: %q is in no message of kroscope's", q[1], part)
			}
		}
	}
}
