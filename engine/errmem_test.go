package engine

import (
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/graph"
)

// A transient error is remembered per resource and per instance, counted
// while it repeats and kept (with its clear time) once it is gone.
func TestObserverRemembersClearedError(t *testing.T) {
	g := &graph.Graph{Name: "webapp", TopologicalOrder: []string{"deployment"},
		Instance:  graph.Instance{GVK: schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "WebApp"}},
		Resources: map[string]*graph.Resource{"deployment": {ID: "deployment", GVK: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}}}}
	e := &Engine{store: state.NewStore()}
	s := &served{graph: g, resource: "webapps.kro.run"}
	obs := observer(e.store, s, nil)
	// The informer's add puts the instance in the state before any reconcile.
	e.store.UpdateInstance(state.InstanceKey{Resource: "webapps.kro.run", Namespace: "demo", Name: "blog"}, func(*state.Instance) {})
	t0 := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	fail := func(at time.Time) {
		obs(reconciler.Observation{Namespace: "demo", Name: "blog", Start: at, State: reconciler.InstanceState{State: reconciler.InstanceStateError},
			Message:   "deployment: the server has a 500",
			Resources: map[string]*reconciler.ResourceDetail{"deployment": {ID: "deployment", State: reconciler.ResourceStateError, Err: errors.New("apply: 500 Internal Server Error")}}})
	}
	fail(t0)
	fail(t0.Add(time.Second))
	obs(reconciler.Observation{Namespace: "demo", Name: "blog", Start: t0.Add(2 * time.Second), State: reconciler.InstanceState{State: reconciler.InstanceStateInProgress},
		Resources: map[string]*reconciler.ResourceDetail{"deployment": {ID: "deployment", State: reconciler.ResourceStateWaitingForReadiness}}})

	in := e.store.Instance(state.InstanceKey{Resource: "webapps.kro.run", Namespace: "demo", Name: "blog"})
	le := in.LastError
	if le == nil || le.Active() || le.Attempts != 2 || le.Resource != "deployment" || le.Err != "deployment: the server has a 500" || !le.Cleared.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("instance error memory: %+v", le)
	}
	re := in.Resource("deployment").LastError
	if re == nil || re.Active() || re.Attempts != 2 || re.Err != "apply: 500 Internal Server Error" {
		t.Fatalf("resource error memory: %+v", re)
	}
	if in.Resource("deployment").Err != "" {
		t.Fatal("the current error did not clear")
	}
}

// The queue's backoff for a failed instance reaches its error memory.
func TestRetryBackoffIsRecorded(t *testing.T) {
	lim := newRecordingLimiter(workqueue.NewTypedItemExponentialFailureRateLimiter[item](100*time.Millisecond, time.Minute))
	e := &Engine{store: state.NewStore(), work: &workQueue{limiter: lim}}
	e.work.store = e.store
	s := &served{resource: "webapps.kro.run"}
	it := item{namespace: "demo", name: "blog"}
	key := state.InstanceKey{Resource: s.resource, Namespace: "demo", Name: "blog"}
	e.store.UpdateInstance(key, func(in *state.Instance) {
		in.LastError = state.RememberError(nil, "boom", "deployment", time.Now())
		in.Resources = []state.Resource{{ID: "deployment", LastError: state.RememberError(nil, "boom", "", time.Now())}}
	})
	lim.When(it)
	lim.When(it)
	before := time.Now()
	e.work.noteRetry(s, it)
	in := e.store.Instance(key)
	if in.LastError.Backoff != 200*time.Millisecond || in.LastError.NextRetry.Before(before.Add(200*time.Millisecond)) {
		t.Fatalf("instance retry: %+v", in.LastError)
	}
	if in.Resources[0].LastError.Backoff != 200*time.Millisecond {
		t.Fatalf("resource retry: %+v", in.Resources[0].LastError)
	}
	lim.Forget(it)
	if _, ok := lim.last(it); ok {
		t.Fatal("Forget kept the delay")
	}
}
