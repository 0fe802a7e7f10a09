// Package requeue holds the typed errors a Reconcile returns to tell the work
// queue what to do next. They are recognised through errors.As, so wrapping
// them with fmt.Errorf("...: %w", err) keeps their meaning.
package requeue

import (
	"errors"
	"fmt"
	"time"
)

// NoRequeue means: do not retry; a later change (a new generation, a watch
// event) will bring the item back.
type NoRequeue struct{ Err error }

func (e *NoRequeue) Error() string { return msg("no requeue", e.Err) }
func (e *NoRequeue) Unwrap() error { return e.Err }

// Needed means: reconcile again now, without rate limiting.
type Needed struct{ Err error }

func (e *Needed) Error() string { return msg("requeue needed", e.Err) }
func (e *Needed) Unwrap() error { return e.Err }

// NeededAfter means: reconcile again after Duration.
type NeededAfter struct {
	Err      error
	Duration time.Duration
}

func (e *NeededAfter) Error() string {
	return msg(fmt.Sprintf("requeue after %s", e.Duration), e.Err)
}
func (e *NeededAfter) Unwrap() error { return e.Err }

func msg(what string, err error) string {
	if err == nil {
		return what
	}
	return err.Error()
}

// None wraps err in a NoRequeue.
func None(err error) error { return &NoRequeue{Err: err} }

// Now wraps err in a Needed.
func Now(err error) error { return &Needed{Err: err} }

// After wraps err in a NeededAfter.
func After(d time.Duration, err error) error { return &NeededAfter{Err: err, Duration: d} }

// Decision is what the queue should do with a reconcile result.
type Decision int

const (
	// Forget: success, drop the item's backoff.
	Forget Decision = iota
	// Drop: do not retry (NoRequeue).
	Drop
	// Immediately: add again now.
	Immediately
	// Later: add again after a delay.
	Later
	// RateLimited: a plain error; retry with backoff.
	RateLimited
)

// Decide maps err to a Decision and, for Later, its delay.
func Decide(err error) (Decision, time.Duration) {
	if err == nil {
		return Forget, 0
	}
	var none *NoRequeue
	var now *Needed
	var after *NeededAfter
	switch {
	case errors.As(err, &none):
		return Drop, 0
	case errors.As(err, &now):
		return Immediately, 0
	case errors.As(err, &after):
		return Later, after.Duration
	}
	return RateLimited, 0
}
