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

// TestDemoUIInTmux drives the real binary's UI in tmux the way a person
// would: instances reach ACTIVE, the error key opens the failing instance
// and shows its error, requeue and delete work.
func TestDemoUIInTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and drives it in tmux")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		prereq.Missing(t, "tmux not found", "apt-get install tmux (.ci/run installs it)")
	}
	bin := prereq.Kroscope(t)
	session := fmt.Sprintf("kroscope-demo-test-%d", os.Getpid())
	// A tmux server of its own (-L): a person's tmux on the same machine,
	// and their kill-server, neither see nor stop it.
	socket := []string{"-L", session}
	tmux := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("tmux", append(socket, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	// A config file with a bad value must not stop the UI: it starts on the
	// defaults and says what is wrong, and where.
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("theme: solarized\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tmux("new-session", "-d", "-s", session, "-x", "160", "-y", "45", bin+" demo --no-mouse --config "+cfg)
	t.Cleanup(func() { _ = exec.Command("tmux", append(socket, "kill-server")...).Run() })
	screen := func() string { return tmux("capture-pane", "-p", "-t", session) }
	waitFor := func(what string, cond func(string) bool) string {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		for {
			s := screen()
			if cond(s) {
				return s
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; screen:\n%s", what, s)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	contains := func(sub string) func(string) bool {
		return func(s string) bool { return strings.Contains(s, sub) }
	}
	keys := func(k ...string) {
		t.Helper()
		for _, key := range k {
			tmux("send-keys", "-t", session, key)
			// Separate keys so an escape is not read as alt+next key.
			time.Sleep(300 * time.Millisecond)
		}
	}

	waitFor("the config problem in the flash line", contains(cfg+`:1: theme: unknown theme "solarized"`))
	waitFor("four ACTIVE instances and the failing one", func(s string) bool {
		return strings.Count(s, "ACTIVE ") >= 4 && strings.Contains(s, "FAILED") && strings.Contains(s, "demo/orders")
	})
	keys("e")
	waitFor("the error of demo/flaky", func(s string) bool {
		return strings.Contains(s, "Flaky demo/flaky") && strings.Contains(s, "division by zero")
	})
	keys("r")
	waitFor("the requeue confirmation", contains("requeued demo/flaky"))
	keys("C-d")
	waitFor("the delete dialog", contains("Delete Flaky demo/flaky?"))
	keys("Right", "Enter")
	waitFor("the instance to be deleted", contains("demo/flaky is gone"))
	keys("Escape") // one esc goes back, even right after the delete dialog
	waitFor("the list without demo/flaky", func(s string) bool {
		return strings.Contains(s, "4 instances") && !strings.Contains(s, "demo/flaky")
	})
	keys("q")
	deadline := time.Now().Add(30 * time.Second)
	for exec.Command("tmux", append(socket, "has-session", "-t", session)...).Run() == nil {
		if time.Now().After(deadline) {
			t.Fatalf("kroscope did not quit on q; screen:\n%s", screen())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
