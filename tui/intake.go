package tui

import (
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/termtext"
)

// The TUI's intake: everything the engine hands the screens comes through
// here, made inert (docs/text-boundary.md). Names, messages, conditions,
// Events, errors, log lines and plans are written by whoever can write an
// instance, an Event or a graph; once through here, no control
// character, escape sequence or bidirectional override of theirs can
// reach a frame. Screens draw what they get and never escape anything
// themselves; a new read from the backend goes through inert.

// snapshot is the backend's snapshot, made inert (cached per instance,
// see state.Views).
func (c *common) snapshot() *state.Snapshot { return c.views.Snapshot(c.b.Snapshot()) }

// inert makes a backend read's answer and error inert. The error keeps
// its chain (errors.Is and As see the original).
func inert[T any](v T, err error) (T, error) { return termtext.Deep(v), termtext.Error(err) }

// inertErr is inert for a call that returns only an error.
func inertErr(err error) error { return termtext.Error(err) }
