package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kroscope/kroscope/engine/state"
)

// TestDebugOverlayShowsMemoryAndQueue: ctrl+g adds a header line with the
// memory and queue figures the engine put in the snapshot, and takes it
// away again.
func TestDebugOverlayShowsMemoryAndQueue(t *testing.T) {
	s := state.NewStore()
	fillStore(s, 3, 2)
	s.SetEngine(state.Engine{Workers: 8, BusyWorkers: 2, QueueDepth: 41, HeapInUse: 120 << 20, RSS: 310 << 20})
	m := newModel(&storeBackend{Store: s}, Options{Theme: "dark", ConfigPath: "-", Now: func() time.Time { return fixedNow }})
	m.refresh()
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 30})
	line := "debug │ heap 120 MiB │ rss 310 MiB │ queue 41 │ in flight 2/8 │ 3 instances"
	if f := plain(m.Frame()); strings.Contains(f, "heap 120 MiB") {
		t.Fatalf("debug figures show before ctrl+g:\n%s", f)
	}
	press(m, "ctrl+g")
	f := plain(m.Frame())
	if got := strings.Split(f, "\n")[1]; strings.TrimSpace(got) != line {
		t.Fatalf("second header line = %q, want %q\n%s", got, line, f)
	}
	press(m, "ctrl+g")
	if f := plain(m.Frame()); strings.Contains(f, "heap 120 MiB") {
		t.Fatalf("debug figures still show after a second ctrl+g:\n%s", f)
	}
}
