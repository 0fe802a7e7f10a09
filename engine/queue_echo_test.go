package engine

import (
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kroscope/kroscope/engine/watch"
)

// A child's add event that shows exactly what a reconcile's create got
// back from the API server wakes nobody, whether it comes after that
// reconcile recorded the object or while the worker still holds the
// instance (then it is judged when the reconcile ends); any other version,
// an update or a deletion wakes it.
func TestChildEchoesOfOwnWritesDoNotWake(t *testing.T) {
	q := &countingQueue{}
	rd := newReader(newGraphTable(), nil, logr.Discard(), &informers{}, "")
	w := &workQueue{queue: q, echoes: rd.echoes}
	cm := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	it := item{gvr: schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: "webapps"}, namespace: "demo", name: "blog"}
	wrote := func(rv string) {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
		u.SetNamespace("demo")
		u.SetName("blog-a")
		u.SetUID("cm-1")
		u.SetResourceVersion(rv)
		rd.Wrote(cm, u, "")
	}
	event := func(typ, rv string) *watch.Event {
		return &watch.Event{Type: typ, Spec: watch.Spec{GVR: cm}, Namespace: "demo", Name: "blog-a", UID: types.UID("cm-1"), ResourceVersion: rv}
	}
	wake := func(ev *watch.Event) int {
		before := q.added
		w.wakeForChild(it, ev)
		return q.added - before
	}

	wrote("10")
	if n := wake(event("add", "10")); n != 0 {
		t.Errorf("the echo of the recorded create queued %d", n)
	}
	if n := wake(event("update", "11")); n != 1 {
		t.Errorf("a version kroscope did not write queued %d, want 1", n)
	}
	if n := wake(event("delete", "10")); n != 1 {
		t.Errorf("a deletion queued %d, want 1", n)
	}
	if n := wake(nil); n != 1 {
		t.Errorf("an unconditional wake queued %d, want 1", n)
	}

	// An update kroscope made still wakes it: the pass that updated a
	// child waits for that event to see it SYNCED.
	wrote("11")
	if n := wake(event("update", "11")); n != 1 {
		t.Errorf("the event of kroscope's own update queued %d, want 1", n)
	}

	// The watch is faster than the create's response: held, then dropped.
	rd.Forget(cm, "demo", "blog-a")
	w.flying = map[item]struct{}{it: {}}
	if n := wake(event("add", "12")); n != 0 {
		t.Fatalf("an event during the reconcile queued %d at once, want it held", n)
	}
	wrote("12")
	before := q.added
	w.land(it)
	if q.added != before {
		t.Errorf("the held echo of the reconcile's own write queued the instance")
	}

	// Held, and not what the reconcile saw: queued when it ends.
	w.flying = map[item]struct{}{it: {}}
	wake(event("add", "13"))
	w.land(it)
	if q.added != before+1 {
		t.Errorf("a held event of someone else's change queued %d, want 1", q.added-before)
	}
	if len(w.held) != 0 || len(w.flying) != 0 {
		t.Errorf("land left held %v, flying %v", w.held, w.flying)
	}
}
