package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func configFile(t *testing.T, s string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A YAML syntax error is reported on the line where it is (issue 27 item
// 6: an unclosed [ on line 4 was reported on line 3).
func TestConfigSyntaxErrorLine(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		line int
	}{
		{"theme: dark\nascii: true\nkeys:\n  requeue: [f5\n  delete: x\n", 4},
		{"theme: dark\nascii: true\nkeys:\n\trequeue: f5\n", 4},
		{"theme: dark\nkeys: {quit: [q}\n", 2},
		{"keys: [\n", 1},
		{"theme: dark\nkeys:\n  quit: q\n bad: x\n", 4},
		{"theme: dark\nkeys: [\n", 2},
		{"a: 1\nb: [1,\n2\n", 2},
	} {
		_, probs := LoadConfig(configFile(t, tc.doc))
		if len(probs) != 1 || probs[0].Line != tc.line || !strings.Contains(probs[0].Msg, "YAML syntax") {
			t.Errorf("%q: problems %v, want one YAML syntax error on line %d", tc.doc, probs, tc.line)
		}
	}
}

// Every problem is reported, counted, each on a line of its own and whole;
// the flash line counts them within 80 columns and says where they are
// listed (it showed the first one, cut at 80 columns).
func TestConfigProblemsCountedAndWhole(t *testing.T) {
	file := configFile(t, "theme: solar\nascii: maybe\nkeys:\n  bogus: [z]\ncolour: red\n")
	_, probs := LoadConfig(file)
	report := ProblemsReport(file, probs)
	lines := strings.Split(strings.TrimSuffix(report, "\n"), "\n")
	if len(lines) != 5 || lines[0] != "4 problems in "+file+":" {
		t.Fatalf("report:\n%s", report)
	}
	for i, want := range []string{":1: theme: unknown theme \"solar\" (known: auto, dark, light, high-contrast)", ":2: ascii:",
		":4: keys.bogus: unknown action (known: applyGraph, back,", ":5: colour: unknown setting (known: theme, ascii, keys)"} {
		if !strings.HasPrefix(lines[i+1], "  "+file+want[:2]) || !strings.Contains(lines[i+1], want) {
			t.Errorf("line %d = %q, want %q", i+1, lines[i+1], want)
		}
	}
	if !strings.HasSuffix(lines[3], ", up, yaml)") {
		t.Errorf("the unknown action's line is cut: %q", lines[3])
	}
	flash := problemsFlash(probs, "")
	if len(flash) > 80 || !strings.HasPrefix(flash, "4 problems") || !strings.HasSuffix(flash, "kroscope config check lists them") {
		t.Errorf("flash %q (%d columns)", flash, len(flash))
	}
	if one := problemsFlash(probs[:1], ""); !strings.HasPrefix(one, file+":1: theme: unknown theme") {
		t.Errorf("one problem's flash %q", one)
	}
	// Given with --config, the file is not the one `config check` reads
	// by default: the command says it.
	if flash := problemsFlash(probs, file); !strings.HasSuffix(flash, "kroscope config check --config "+file+" lists them") {
		t.Errorf("flash for --config %s: %q", file, flash)
	}
}
