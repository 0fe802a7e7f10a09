package engine

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/engine/watch"
)

// The holder's instance watch turns a new kroscope.dev/requeue value into
// an immediate reconcile that also drops the instance's backoff (a failing
// instance retried every minute is retried from 100ms again); any other
// annotation change wakes it without resetting the backoff, and a write
// that changes neither (the holder's own status write) does not wake it.
func TestRequeueAnnotationForgetsBackoff(t *testing.T) {
	lim := newRecordingLimiter(workqueue.NewTypedItemExponentialFailureRateLimiter[item](100*time.Millisecond, time.Minute))
	q := workqueue.NewTypedRateLimitingQueueWithConfig[item](lim, workqueue.TypedRateLimitingQueueConfig[item]{Name: "test"})
	defer q.ShutDown()
	store := state.NewStore()
	gs := &graphServer{store: store, work: &workQueue{limiter: lim, queue: q}, noteWrites: func(string, metav1.Object) {}}
	gvr := schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: "webapps"}
	s := &served{gs: gs, gvr: gvr, resource: "webapps.kro.run"}
	h := s.instanceHandler(&watch.Monitor{})
	it := item{gvr: gvr, namespace: "demo", name: "blog"}
	fail := func() {
		for range 5 {
			lim.When(it)
		}
	}
	update := func(oldAnn, newAnn map[string]string) {
		o, u := obj(1, nil, oldAnn, false), obj(1, nil, newAnn, false)
		o.SetNamespace("demo")
		u.SetNamespace("demo")
		o.SetName("blog")
		u.SetName("blog")
		h.OnUpdate(o, u)
	}
	drain := func() int {
		n := q.Len()
		for range n {
			got, _ := q.Get()
			q.Done(got)
		}
		return n
	}

	fail()
	update(nil, nil) // a status write: same generation, labels, annotations
	if n := drain(); n != 0 || lim.NumRequeues(it) != 5 {
		t.Fatalf("a status-only update queued %d items, backoff count %d; want 0 and 5", n, lim.NumRequeues(it))
	}
	update(nil, map[string]string{"team": "a"})
	if n := drain(); n != 1 || lim.NumRequeues(it) != 5 {
		t.Fatalf("another annotation: queued %d, backoff count %d; want 1 and the backoff kept (5)", n, lim.NumRequeues(it))
	}
	update(nil, map[string]string{RequeueAnnotation: "2026-12-01T12:00:00.1Z"})
	if n := drain(); n != 1 || lim.NumRequeues(it) != 0 {
		t.Fatalf("requeue annotation: queued %d, backoff count %d; want 1 and the backoff forgotten", n, lim.NumRequeues(it))
	}
}
