package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	if _, err := exec.LookPath("tmux"); err != nil {
		prereq.Missing(t, "tmux not found", "apt-get install tmux (.ci/run installs it)")
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
	session := fmt.Sprintf("kroscope-edit-test-%d", os.Getpid())
	socket := []string{"-L", session}
	tmux := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("tmux", append(socket, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	tmux("new-session", "-d", "-s", session, "-x", "160", "-y", "45",
		"env EDITOR="+editor+" KUBE_EDITOR= "+bin+" demo --examples webapp --no-mouse --config -")
	t.Cleanup(func() { _ = exec.Command("tmux", append(socket, "kill-server")...).Run() })
	waitFor := func(what string, cond func(string) bool) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		for {
			s := tmux("capture-pane", "-p", "-t", session)
			if cond(s) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; screen:\n%s", what, s)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitFor("demo/shop ACTIVE", func(s string) bool { return strings.Count(s, "ACTIVE ") >= 2 && strings.Contains(s, "demo/shop") })
	for _, k := range []string{"/", "s", "h", "o", "p", "Enter", "E"} {
		tmux("send-keys", "-t", session, k)
		time.Sleep(300 * time.Millisecond)
	}
	waitFor("the corrected edit applied", func(s string) bool { return strings.Contains(s, "applied the edit of demo/shop") })
	second, err := os.ReadFile(filepath.Join(dir, "second.yaml"))
	if err != nil {
		t.Fatalf("the editor did not open a second time: %v", err)
	}
	want := `# error: WebApp.kro.run "shop" is invalid: spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`
	if !strings.Contains(string(second), want) || !strings.Contains(string(second), "replicas: many") {
		t.Fatalf("the second editor file does not show the API server's error above the edit:\n%s", second)
	}
}
