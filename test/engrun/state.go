package engrun

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/kroscope/kroscope/engine/state"
)

// Until waits until cond holds on the engine's state, looking at every
// change and at least every 200ms, and returns that state. After timeout it
// fails the test with what it waited for and cond's last description
// (Describe of the state when cond gives none).
func (r *Run) Until(timeout time.Duration, what string, cond func(*state.Snapshot) (bool, string)) *state.Snapshot {
	r.t.Helper()
	ch, cancel := r.E.Subscribe()
	defer cancel()
	deadline := time.After(timeout)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		s := r.E.Snapshot()
		ok, desc := cond(s)
		if ok {
			return s
		}
		select {
		case <-ch:
		case <-tick.C:
		case <-deadline:
			if desc == "" {
				desc = Describe(s)
			}
			r.t.Fatalf("timed out after %s waiting for %s:\n%s", timeout, what, desc)
		}
	}
}

// Describe says what the engine's state holds, for failure messages: its
// modes, graphs, watches, and the first ten instances with their nodes.
func Describe(s *state.Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "startup=%+v mode=%+v engine=%+v\n", s.Startup, s.Mode, s.Engine)
	if s.Fatal != nil {
		fmt.Fprintf(&b, "fatal: %+v\n", *s.Fatal)
	}
	for _, g := range s.Graphs {
		fmt.Fprintf(&b, "graph %s served=%v err=%q\n", g.Name, g.Served, g.Err)
	}
	for _, w := range s.Watches {
		fmt.Fprintf(&b, "watch %s synced=%v healthy=%v %s\n", w.Name, w.Synced, w.Healthy, w.Err)
	}
	for i, in := range s.Instances {
		if i == 10 {
			fmt.Fprintf(&b, "... %d more instances\n", len(s.Instances)-10)
			break
		}
		fmt.Fprintf(&b, "instance %s %s (%d reconciles): %s\n", in.Key, in.State, in.Reconciles, in.Message)
		for _, r := range in.Resources {
			fmt.Fprintf(&b, "  %s %s %s %s\n", r.ID, r.State, r.WaitingFor, r.Err)
		}
	}
	return b.String()
}

// Buffer is a bytes.Buffer safe for concurrent writers and readers: an
// engine's log or output read while it runs.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
