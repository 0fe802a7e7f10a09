package tui

import (
	"context"
	"errors"

	"github.com/kroscope/kroscope/engine/state"
)

// ErrNoEngine is what a Static backend's actions return.
var ErrNoEngine = errors.New("no engine is running")

// Static is a Backend over a fixed snapshot whose actions fail with
// ErrNoEngine. The command uses it to show errors that happen before an
// engine exists (no kubeconfig, bad flags) in the UI instead of a stack trace.
func Static(snap *state.Snapshot) Backend { return staticBackend{snap: snap} }

// FatalBackend is a Static backend that shows only the Fatal screen.
func FatalBackend(title, cause, hint string) Backend {
	return Static(&state.Snapshot{Startup: state.Startup{Done: true}, Fatal: &state.Fatal{Title: title, Cause: cause, Hint: hint}})
}

type staticBackend struct{ snap *state.Snapshot }

func (s staticBackend) Snapshot() *state.Snapshot { return s.snap }

// Subscribe returns a channel that never fires: the state never changes.
func (s staticBackend) Subscribe() (<-chan struct{}, func()) { return make(chan struct{}), func() {} }

func (s staticBackend) Requeue(state.InstanceKey) error { return ErrNoEngine }

func (s staticBackend) RequeueAll(func(*state.Instance) bool) (int, error) { return 0, ErrNoEngine }

func (s staticBackend) Delete(context.Context, state.InstanceKey) error { return ErrNoEngine }
