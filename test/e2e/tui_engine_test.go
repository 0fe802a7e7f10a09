package e2e

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/kroscope/kroscope/tui"
)

// TestTUIShowsRealEngine runs the terminal UI over the real engine on the
// test API server, creates an instance, opens it, and waits until the screen
// shows every node SYNCED and the instance ACTIVE.
func TestTUIShowsRealEngine(t *testing.T) {
	rig := newEngRig(t)
	run, gvr := rig.serveChain("tui-chain", "TuiChain")

	m := tui.NewModel(run.e, tui.Options{ConfigPath: "-", Theme: "dark", ASCII: true, NoColor: true})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 30),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	t.Cleanup(func() { _ = tm.Quit() })

	rig.createInstance(gvr, "TuiChain", "shown", map[string]any{"value": "hello"})

	// The instance appears in the table; open it.
	screenUntil(t, tm, "the instance row", func(s string) bool { return strings.Contains(s, "/shown") })
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})

	// Its graph shows the three nodes reaching SYNCED, and the instance ACTIVE.
	screen := screenUntil(t, tm, "every node SYNCED on screen", func(s string) bool {
		return strings.Count(s, "SYNCED") >= 3 && strings.Contains(s, "ACTIVE")
	})
	for _, id := range []string{"a", "b", "c"} {
		if !strings.Contains(screen, id) {
			t.Errorf("node %q not on screen:\n%s", id, screen)
		}
	}
}

// screenUntil asks the running program for its frame until cond holds.
func screenUntil(t *testing.T, tm *teatest.TestModel, what string, cond func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	last := ""
	for time.Now().Before(deadline) {
		reply := make(chan string, 1)
		tm.Send(tui.FrameRequest{Reply: reply})
		select {
		case s := <-reply:
			last = ansi.Strip(s)
			if cond(last) {
				return last
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the program did not answer a frame request")
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s; last screen:\n%s", what, last)
	return ""
}
