package state

import "time"

// ErrorMemory is the last error of a resource or an instance. It is kept
// after the error clears, because a transient error that cleared a second
// ago is exactly what an operator is asked about and would otherwise leave
// no trace.
type ErrorMemory struct {
	Err string
	// Since is the first failure of the current run of attempts; At the
	// latest one.
	Since time.Time
	At    time.Time
	// Attempts counts consecutive failed reconciles.
	Attempts int
	// Backoff is the work queue's delay before the next retry and NextRetry
	// when that is; both zero when unknown (the error was not retried with
	// backoff, or has cleared).
	Backoff   time.Duration
	NextRetry time.Time
	// Cleared is when a reconcile first passed without the error; zero
	// while the error holds.
	Cleared time.Time
	// Resource is, for an instance's memory, the id of the resource whose
	// error it is ("" when the error is the instance's own).
	Resource string
}

// Active reports whether the error still holds.
func (e *ErrorMemory) Active() bool { return e != nil && e.Cleared.IsZero() }

// RememberError returns the memory after a reconcile that ended with err
// ("" for none) at now. prev is never modified (snapshots share it): a
// repeated failure counts one more attempt, a new failure after a clear
// starts again at one, and a clear keeps the error with its Cleared time.
func RememberError(prev *ErrorMemory, err, resource string, now time.Time) *ErrorMemory {
	if err == "" {
		if !prev.Active() {
			return prev
		}
		next := *prev
		next.Cleared = now
		next.Backoff, next.NextRetry = 0, time.Time{}
		return &next
	}
	if prev.Active() {
		next := *prev
		next.Err, next.At, next.Resource = err, now, resource
		next.Attempts++
		return &next
	}
	return &ErrorMemory{Err: err, Since: now, At: now, Attempts: 1, Resource: resource}
}

// WithRetry returns the memory with the queue's backoff before the next
// attempt; nil and cleared memories are returned as they are.
func (e *ErrorMemory) WithRetry(backoff time.Duration, now time.Time) *ErrorMemory {
	if !e.Active() {
		return e
	}
	next := *e
	next.Backoff, next.NextRetry = backoff, now.Add(backoff)
	return &next
}
