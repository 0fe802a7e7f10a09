package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kroscope/kroscope/engine/state"
)

// Attached to another kroscope, the header names the holder (and says when
// it stopped renewing the Lease), and a requeue's flash says how it reached
// the holder, in the engine's words.
func TestAttachedHeaderAndRequeueFlash(t *testing.T) {
	s := fixture()
	s.Mode = state.Mode{Identity: "laptop_x1", Holder: "kroscope-7d9f-abcde", Attached: true,
		RequeueNote: "asked kroscope-7d9f-abcde through the kroscope.dev/requeue annotation"}
	m, f := newTestModel(t, s, Options{}, 200, 40)
	if out := plain(m.View().Content); !strings.Contains(out, "attached to kroscope-7d9f-abcde") {
		t.Errorf("header does not name the holder it is attached to:\n%s", out)
	}
	pressRun(t, m, "r")
	if req, _, _ := f.calls(); len(req) != 1 {
		t.Fatalf("r sent %d requeues, want 1", len(req))
	}
	if !strings.Contains(m.flash.text, "requeued ") || !strings.HasSuffix(m.flash.text, ": "+s.Mode.RequeueNote) || m.flash.isErr {
		t.Errorf("flash = %q (error %v), want the requeue and how it reached the holder", m.flash.text, m.flash.isErr)
	}

	s.Mode.HolderExpired = true
	m, _ = newTestModel(t, s, Options{}, 200, 40)
	if out := plain(m.View().Content); !strings.Contains(out, "attached to kroscope-7d9f-abcde, lease expired") {
		t.Errorf("header does not say the holder's lease expired:\n%s", out)
	}
}

// Attached, a requeue is a PATCH to the API server: it runs off the UI
// loop, so a slow server never freezes the keys.
func TestRequeueDoesNotBlockTheUI(t *testing.T) {
	m, f := newTestModel(t, fixture(), Options{}, 160, 30)
	f.hold = make(chan struct{})
	pressed := make(chan tea.Cmd, 1)
	go func() {
		_, cmd := m.Update(keyMsg("r"))
		pressed <- cmd
	}()
	var cmd tea.Cmd
	select {
	case cmd = <-pressed:
	case <-time.After(10 * time.Second):
		close(f.hold)
		t.Fatal("r blocked the UI loop while the requeue waited on the API server")
	}
	if !strings.Contains(m.flash.text, "requeueing ") {
		t.Errorf("flash while the requeue runs = %q", m.flash.text)
	}
	close(f.hold)
	if cmd == nil {
		t.Fatal("r returned no command")
	}
	m.Update(cmd())
	if !strings.HasPrefix(m.flash.text, "requeued ") {
		t.Errorf("flash after the requeue = %q", m.flash.text)
	}
}
