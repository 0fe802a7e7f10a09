package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kroscope/kroscope/test/prereq"
)

// TestDemoEditLoopInTmux: in the demo, `E` with a value the instance's
// schema refuses (replicas: many, where the schema says integer, at most
// 20) is refused at write time with the API server's message, and the
// editor opens again with that error on top; the corrected edit applies
// (issue 27 item 7: the demo said "applied", then the instance FAILED).
func TestDemoEditLoopInTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and drives it in tmux")
	}
	bin := prereq.Kroscope(t)
	dir := t.TempDir()
	editor := filepath.Join(dir, "editor.sh")
	script := `#!/bin/sh
n=$(cat ` + dir + `/count 2>/dev/null || echo 0); n=$((n+1)); echo $n > ` + dir + `/count
if [ $n = 1 ]; then sed -i 's/replicas: 3/replicas: many/' "$1"; else cp "$1" ` + dir + `/second.yaml; sed -i 's/replicas: many/replicas: 4/' "$1"; fi
`
	if err := os.WriteFile(editor, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	s := startTmux(t, "kroscope-edit-test", 160, 45,
		"env EDITOR="+editor+" KUBE_EDITOR= "+bin+" demo --examples webapp --no-mouse --config -")
	s.waitFor("demo/shop ACTIVE", func(sc string) bool { return strings.Count(sc, "ACTIVE ") >= 2 && strings.Contains(sc, "demo/shop") })
	s.keys("/", "s", "h", "o", "p", "Enter", "E")
	s.waitFor("the corrected edit applied", contains("applied the edit of demo/shop"))
	second, err := os.ReadFile(filepath.Join(dir, "second.yaml"))
	if err != nil {
		t.Fatalf("the editor did not open a second time: %v", err)
	}
	want := `# error: WebApp.kro.run "shop" is invalid: spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`
	if !strings.Contains(string(second), want) || !strings.Contains(string(second), "replicas: many") {
		t.Fatalf("the second editor file does not show the API server's error above the edit:\n%s", second)
	}
}
