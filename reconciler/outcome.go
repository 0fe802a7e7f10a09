package reconciler

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kroscope/kroscope/reconciler/redact"
	"github.com/kroscope/kroscope/reconciler/requeue"
)

// outcome is what the reconcile concludes about the instance: its state
// and message, and the facts the status, the queue and the observer read
// from it. The run sets it; what follows from it (the error the queue
// reads, the ResourcesReady condition, the Event of a change) is decided
// here, so every reader draws the same conclusion.
type outcome struct {
	st  string
	msg string
	// gone: the instance no longer exists (or its finalizer was just
	// removed); deleting: it is being deleted; suspended: its reconcile
	// annotation pauses it; pruning: inventory prune still deletes objects;
	// blocked: deletion failed for a child.
	gone, deleting, suspended, pruning, blocked bool
	// managedErr is set when the finalizer/labels could not be written.
	managedErr error
	// forbidden records a 403 from the impersonated client (error metric);
	// set by concurrent resources.
	forbidden atomic.Bool
	// projected are the instance status fields the graph projects.
	projected map[string]any
}

func (o *outcome) set(state, message string) { o.st, o.msg = state, message }
func (o *outcome) state() string             { return o.st }
func (o *outcome) message() string           { return o.msg }

// degrade sets state and message unless the instance is already in ERROR,
// whose message says more.
func (o *outcome) degrade(state, message string) {
	if o.st != InstanceStateError {
		o.set(state, message)
	}
}

// note records 403s so the impersonation error metric counts them.
func (o *outcome) note(err error) {
	if apierrors.IsForbidden(err) {
		o.forbidden.Store(true)
	}
}

func (o *outcome) wasForbidden() bool { return o.forbidden.Load() }

// vanished: the instance is not there (or just let go).
func (o *outcome) vanished(message string) { o.gone, o.msg = true, message }

// startDeleting: the instance is being deleted.
func (o *outcome) startDeleting() { o.deleting, o.st = true, InstanceStateDeleting }

// block records whether deletion is stuck on an error.
func (o *outcome) block(blocked bool) { o.blocked = blocked }

// suspend pauses the instance: the status says so, nothing else happens.
func (o *outcome) suspend() {
	o.suspended = true
	o.set(InstanceStateSuspended, suspendedMessage)
}

// prunes notes that inventory prune still deletes objects: an ACTIVE
// instance is IN_PROGRESS while they leave.
func (o *outcome) prunes() {
	if o.st == InstanceStateActive {
		o.pruning = true
		o.set(InstanceStateInProgress, "pruning children of resources no longer in the graph")
	}
}

// unmanaged records that the finalizer/labels could not be written.
func (o *outcome) unmanaged(err error) { o.managedErr = err }

// waitsOnOwnWrites reports whether the instance state leaves room for
// settlingOwnWrites: IN_PROGRESS, and marked managed.
func (o *outcome) waitsOnOwnWrites() bool {
	return o.st == InstanceStateInProgress && o.managedErr == nil
}

// project keeps the status fields the graph projects.
func (o *outcome) project(status map[string]any) { o.projected = status }

// queueError maps the outcome to the typed error the queue reads.
func (o *outcome) queueError(after time.Duration) error {
	switch o.st {
	case InstanceStateError:
		return errors.New(o.msg)
	case InstanceStateFailed:
		// Retrying cannot help: only a spec change (a new generation) can.
		return requeue.None(errors.New(o.msg))
	case InstanceStateInProgress:
		return requeue.After(after, errors.New(o.msg))
	}
	return nil
}

// fill sets what the outcome says in the Observation, its message
// redacted.
func (o *outcome) fill(obs *Observation, red *redact.Set) {
	obs.Gone, obs.Deleting = o.gone, o.deleting
	obs.Message = red.String(o.msg)
	obs.State = InstanceState{State: o.st, ResourceStates: map[string]*ResourceState{}}
	if o.st == InstanceStateError || o.st == InstanceStateFailed {
		obs.State.ReconcileErr = errors.New(obs.Message)
	}
}

// wireState is the state written to the instance, live the one written
// before. SUSPENDED is kroscope's own: a paused instance keeps the state
// it had (IN_PROGRESS if none).
func (o *outcome) wireState(live string) string {
	if o.st != InstanceStateSuspended {
		return o.st
	}
	if live != "" {
		return live
	}
	return InstanceStateInProgress
}

// statusFields are the status fields to write: evaluated on the normal
// path, carried over from the live status while deleting or suspended.
func (o *outcome) statusFields(live map[string]any) map[string]any {
	if o.deleting || o.suspended {
		return live
	}
	return o.projected
}

// keepsPreviousConditions: the instance could not be marked managed, so
// nothing was observed and the author's conditions written before stay.
func (o *outcome) keepsPreviousConditions() bool { return o.managedErr != nil }

// isDeleting: while deleting, the author's conditions are not evaluated.
func (o *outcome) isDeleting() bool { return o.deleting }

// managedCondition is kro's InstanceManaged condition.
func (o *outcome) managedCondition() condition {
	if o.managedErr != nil {
		return condition{ConditionInstanceManaged, metav1.ConditionFalse, "ManagementFailed", "finalizer/labeling failed: " + o.managedErr.Error()}
	}
	return condition{ConditionInstanceManaged, metav1.ConditionTrue, "Managed", msgManaged}
}

// resourcesReady is kro's ResourcesReady condition. kroscope's FAILED
// state (only a spec or graph change can help) is reported with kro's
// NotReady "resource error"; childDeleting names the child an instance
// waits for, asked only when nothing else explains the wait.
func (o *outcome) resourcesReady(childDeleting func() string) condition {
	c := func(s metav1.ConditionStatus, reason, msg string) condition {
		return condition{ConditionResourcesReady, s, reason, msg}
	}
	switch {
	case o.deleting && o.blocked:
		return c(metav1.ConditionUnknown, reasonUnderDel, "deletion blocked: "+o.msg)
	case o.deleting:
		return c(metav1.ConditionUnknown, reasonUnderDel, msgDeleting)
	case o.managedErr != nil:
		return c(metav1.ConditionUnknown, reasonAwaiting, fmt.Sprintf("condition %q is awaiting reconciliation", ConditionResourcesReady))
	case o.suspended:
		return c(metav1.ConditionFalse, reasonSuspended, suspendedMessage)
	case o.st == InstanceStateActive:
		return c(metav1.ConditionTrue, "AllResourcesReady", msgAllReady)
	case o.st == InstanceStateError || o.st == InstanceStateFailed:
		return c(metav1.ConditionFalse, reasonNotReady, "resource error: "+o.msg)
	}
	if !o.pruning {
		if msg := childDeleting(); msg != "" {
			return c(metav1.ConditionFalse, reasonDeleting, msg)
		}
	}
	return c(metav1.ConditionFalse, reasonNotReady, "awaiting resource readiness: "+o.msg)
}

// announcement is the Event a status write announces, from the state and
// ResourcesReady message written before: a state change, or a new error
// message while in ERROR/FAILED. ok is false when there is none.
func (o *outcome) announcement(oldState, oldMsg, newMsg string) (typ, reason, msg string, ok bool) {
	switch {
	case oldState == "" && (o.st == InstanceStateInProgress || o.st == InstanceStateActive):
		// A new instance's first state is news only when it is a problem:
		// an Event per new instance is noise that, at scale, competes with
		// the rollout for the API server and trails it by many seconds.
	case oldState != o.st:
		typ := corev1.EventTypeNormal
		if o.st == InstanceStateError || o.st == InstanceStateFailed {
			typ = corev1.EventTypeWarning
		}
		from := oldState
		if from == "" {
			from = "NEW"
		}
		return typ, "State" + stateReason(o.st), fmt.Sprintf("%s -> %s: %s", from, o.st, o.msg), true
	case (o.st == InstanceStateError || o.st == InstanceStateFailed) && newMsg != oldMsg:
		return corev1.EventTypeWarning, "State" + stateReason(o.st), o.msg, true
	}
	return "", "", "", false
}
