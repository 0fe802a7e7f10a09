package engine

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/graph"
)

// Once kroscope removed its finalizer the instance stays in the state,
// DELETING with every child DELETED, until the informer sees the API server
// remove it; a late observation never brings a removed instance back.
func TestObserverKeepsFinishedDeletionUntilServerRemovesIt(t *testing.T) {
	g := &graph.Graph{Name: "webapp", TopologicalOrder: []string{"config"},
		Instance:  graph.Instance{GVK: schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "WebApp"}},
		Resources: map[string]*graph.Resource{"config": {ID: "config", GVK: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}}}}
	e := &Engine{store: state.NewStore()}
	s := &served{graph: g, resource: "webapps.kro.run"}
	obs := observer(e.store, s, nil)
	key := state.InstanceKey{Resource: s.resource, Namespace: "demo", Name: "flaky"}
	gone := reconciler.Observation{Namespace: "demo", Name: "flaky", Gone: true, Deleting: true, Start: time.Now(),
		State: reconciler.InstanceState{State: reconciler.InstanceStateDeleting}, Message: "children deleted; finalizer removed",
		Resources: map[string]*reconciler.ResourceDetail{"config": {ID: "config", State: reconciler.ResourceStateDeleted}}}

	obs(gone)
	if e.store.Instance(key) != nil {
		t.Fatal("an observation of an instance the state does not hold created it")
	}
	e.store.UpdateInstance(key, func(in *state.Instance) { in.State = reconciler.InstanceStateDeleting; in.Deleting = true })
	obs(gone)
	in := e.store.Instance(key)
	if in == nil {
		t.Fatal("the instance left the state before the API server removed it")
	}
	if in.State != reconciler.InstanceStateDeleting || in.Resource("config").State != reconciler.ResourceStateDeleted || in.Message == "" {
		t.Fatalf("finished teardown not shown: %+v", in)
	}
}
