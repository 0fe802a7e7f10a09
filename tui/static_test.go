package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

func TestFatalBackendShowsCauseAndHint(t *testing.T) {
	b := FatalBackend("No kubeconfig", "stat /home/me/.kube/config: no such file or directory", "Pass --kubeconfig, set KUBECONFIG, or run with --demo.")
	m := newModel(b, Options{Theme: "dark", ConfigPath: "-", Now: func() time.Time { return fixedNow }})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	out := plain(m.Frame())
	for _, want := range []string{"No kubeconfig", "no such file or directory", "What to do", "--demo", "q quits"} {
		if !strings.Contains(out, want) {
			t.Fatalf("fatal screen lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "goroutine") || strings.Contains(out, ".go:") {
		t.Fatalf("fatal screen looks like a stack trace:\n%s", out)
	}
	press(m, "ctrl+d", "?")
	if len(m.stack) != 1 {
		t.Fatal("keys other than quit act behind the fatal screen")
	}
	if _, cmd := m.Update(keyMsg("q")); cmd == nil {
		t.Fatal("q does not quit the fatal screen")
	}
	if err := b.Requeue(fixture().Instances[0].Key); err != ErrNoEngine {
		t.Fatalf("Requeue = %v", err)
	}
}
