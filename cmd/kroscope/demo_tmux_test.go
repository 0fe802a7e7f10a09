package main

import (
	"os"
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
	bin := prereq.Kroscope(t)
	// A config file with a bad value must not stop the UI: it starts on the
	// defaults and says what is wrong, and where.
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("theme: solarized\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startTmux(t, "kroscope-demo-test", 160, 45, bin+" demo --no-mouse --config "+cfg)
	waitFor, keys := s.waitFor, s.keys

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
	for s.alive() {
		if time.Now().After(deadline) {
			t.Fatalf("kroscope did not quit on q; screen:\n%s", s.screen())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
