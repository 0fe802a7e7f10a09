package demo

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/reconciler"
)

// startDemo runs the demo with the examples named and the engine over it
// (workers as `kroscope demo --workers`) until the test ends.
func startDemo(t *testing.T, workers int, examples ...string) (*Demo, *engine.Engine) {
	t.Helper()
	d, err := New(Options{Examples: examples, Log: logr.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(d.EngineOptions(workers, logr.Discard()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	engineDone, demoDone := make(chan error, 1), make(chan error, 1)
	go func() { engineDone <- e.Run(ctx) }()
	go func() { demoDone <- d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-engineDone
		<-demoDone
	})
	return d, e
}

// watchStates fails on every ERROR or FAILED instance the engine publishes
// until done, or after two minutes.
func watchStates(t *testing.T, e *engine.Engine, during string, done func() bool) {
	t.Helper()
	changes, unsubscribe := e.Subscribe()
	defer unsubscribe()
	seen := map[string]bool{}
	deadline := time.After(2 * time.Minute)
	for !done() {
		for _, in := range e.Snapshot().Instances {
			if (in.State == reconciler.InstanceStateError || in.State == reconciler.InstanceStateFailed) && !seen[in.Message] {
				seen[in.Message] = true
				t.Errorf("during %s: %s %s: %s", during, in.Key.Name, in.State, in.Message)
			}
		}
		select {
		case <-changes:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatalf("%s: not done after 2 minutes", during)
		}
	}
}

func countActive(e *engine.Engine) int {
	n := 0
	for _, in := range e.Snapshot().Instances {
		if in.State == reconciler.InstanceStateActive {
			n++
		}
	}
	return n
}
