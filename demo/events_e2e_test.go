package demo

import (
	"strings"
	"testing"
	"time"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
)

// The Events the reconciler records on the demo cluster are the ones the
// instance screen lists (the engine reads them through the dynamic client,
// by involvedObject.uid).
func TestInstanceScreenShowsRecordedEvents(t *testing.T) {
	_, e := startDemo(t, 0, "webapp")
	var key state.InstanceKey
	deadline := time.Now().Add(2 * time.Minute)
	for key.Name == "" {
		if time.Now().After(deadline) {
			t.Fatal("shop is not ACTIVE after 2 minutes")
		}
		time.Sleep(50 * time.Millisecond)
		for _, in := range e.Snapshot().Instances {
			if in.Key.Name == "shop" && in.State == reconciler.InstanceStateActive {
				key = in.Key
			}
		}
	}
	var events []state.Event
	deadline = time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && len(events) == 0 { // the recorder writes asynchronously
		det, err := e.InstanceDetail(t.Context(), key)
		if err != nil {
			t.Fatal(err)
		}
		if det.EventsErr != "" {
			t.Fatalf("listing Events: %s", det.EventsErr)
		}
		events = det.Events
		time.Sleep(50 * time.Millisecond)
	}
	reasons := []string{}
	for _, ev := range events {
		reasons = append(reasons, ev.Reason)
	}
	if !strings.Contains(strings.Join(reasons, ","), "StateActive") {
		t.Fatalf("shop's Events: %v, want a StateActive one", reasons)
	}
}
