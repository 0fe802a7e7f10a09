package tui

import (
	"strings"
	"testing"

	"github.com/kroscope/kroscope/engine/state"
)

// set replaces the fake's snapshot and signals the change, as the engine
// does after a reconcile.
func (f *fakeBackend) set(s *state.Snapshot) {
	f.mu.Lock()
	f.snap = s
	f.mu.Unlock()
	select {
	case f.ch <- struct{}{}:
	default:
	}
}

// footerLine is the frame's last line.
func footerLine(frame string) string {
	ls := strings.Split(strings.TrimRight(frame, "\n"), "\n")
	return ls[len(ls)-1]
}

// "After ctrl+d is confirmed ... the row disappears; the footer still
// offers r and ctrl+d": the deleting instance stays on screen with its
// children's teardown and the finalizer that holds one, delete is not
// offered again, and once the instance is gone neither is requeue.
func TestNewUserDeletionCanBeWatched(t *testing.T) {
	snap := only(fixture(), "shop")
	tm, f := flowOver(t, snap, Options{}, 240, 40)
	send(tm, "enter", "ctrl+d", "right", "enter")
	eventually(t, "Delete", func() bool { _, _, d := f.calls(); return len(d) == 1 })

	// The engine's next observation: the instance is deleting, the last
	// layer is held by a finalizer, the others wait for it.
	del := only(snap, "shop")
	del.Version++
	in := del.Instances[0]
	in.Deleting, in.State, in.Version = true, "DELETING", in.Version+1
	in.Message = "deleting: service: deleting; deployment: pending_deletion"
	for i := range in.Resources {
		r := &in.Resources[i]
		switch r.ID {
		case "ingress":
			r.State = "DELETED"
		case "service":
			r.State, r.WaitingFor = "DELETING", "held by finalizer example.com/hold (Service team-a/shop)"
		default:
			r.State, r.WaitingFor = "PENDING_DELETION", "waiting for service to be deleted first"
		}
	}
	f.set(del)
	var out string
	eventually(t, "the teardown on screen", func() bool { out = tmFrame(t, tm); return strings.Contains(out, "held by finalizer example.com/hold") })
	for _, want := range []string{"WebApp team-a/shop", "DELETING", "PENDING_DELETION", "waiting for service to be deleted first"} {
		if !strings.Contains(out, want) {
			t.Fatalf("screen lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "is gone") {
		t.Fatalf("the instance is called gone while it is deleting:\n%s", out)
	}
	if foot := footerLine(out); strings.Contains(foot, "delete") || !strings.Contains(foot, "requeue") {
		t.Fatalf("footer of a deleting instance: %q", foot)
	}

	// The API server removed it: the screen says so, and offers nothing
	// that needs an instance.
	gone := only(snap)
	gone.Version += 2
	f.set(gone)
	eventually(t, "the instance gone", func() bool { out = tmFrame(t, tm); return strings.Contains(out, "is gone") })
	if foot := footerLine(out); strings.Contains(foot, "delete") || strings.Contains(foot, "requeue") {
		t.Fatalf("footer offers actions on a gone instance: %q", foot)
	}
	finalFrame(t, tm)
}
