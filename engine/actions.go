package engine

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kroscope/kroscope/engine/authority"
	"github.com/kroscope/kroscope/engine/readonly"
	"github.com/kroscope/kroscope/engine/state"
)

// Requeue reconciles an instance now, bypassing any backoff. Attached
// (another kroscope holds the Lease, or kro reconciles) it writes
// RequeueAnnotation on the instance instead, for the reconciler that owns
// it; observing without --attach it is refused.
func (e *Engine) Requeue(key state.InstanceKey) error {
	s, err := e.table.servedFor(key)
	if err != nil {
		return err
	}
	if _, ok, _ := s.inf.GetIndexer().GetByKey(cacheKey(key.Namespace, key.Name)); !ok {
		return fmt.Errorf("instance %s no longer exists", key)
	}
	switch a := e.wr.decision().Requeue; a.Route {
	case authority.Refused:
		return fmt.Errorf("not requeueing %s: %s", key, a.Why)
	case authority.Cluster:
		// The annotation is a patch of the instance: refused before the
		// call when this user may not patch these.
		if err := e.access.refuse("requeueing", key, func(k state.KindAccess) state.Permission { return k.Requeue }); err != nil {
			return err
		}
		err := touchRequeue(e.cl.gated(), s, key)
		e.access.recheckAfterForbidden(context.Background(), s, err)
		return err
	}
	e.work.addNow(itemOf(s, key))
	return nil
}

// RequeueAll requeues every known instance that filter accepts (nil: all)
// and returns how many were requeued.
func (e *Engine) RequeueAll(filter func(*state.Instance) bool) (int, error) {
	n := 0
	var errs []error
	for _, in := range e.store.Snapshot().Instances {
		if filter != nil && !filter(in) {
			continue
		}
		if err := e.Requeue(in.Key); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// Delete deletes an instance; the reconciler then removes its children in
// reverse order and finally the finalizer.
func (e *Engine) Delete(ctx context.Context, key state.InstanceKey) error {
	s, err := e.table.servedFor(key)
	if err != nil {
		return err
	}
	// Refused before any call when the user may not delete these.
	if err := e.access.refuse("deleting", key, func(k state.KindAccess) state.Permission { return k.Delete }); err != nil {
		return err
	}
	switch a := e.wr.decision().Delete; a.Route {
	case authority.Refused:
		return fmt.Errorf("not deleting %s: %s", key, a.Why)
	case authority.Cluster:
		ctx = readonly.UserWrite(ctx) // the user's own action passes the closed gate
	}
	err = e.cl.gated().Dynamic().Resource(s.gvr).Namespace(key.Namespace).Delete(ctx, key.Name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("instance %s no longer exists", key)
	}
	if err != nil {
		e.access.recheckAfterForbidden(ctx, s, err)
		return fmt.Errorf("deleting %s: %w", key, err)
	}
	return nil
}
