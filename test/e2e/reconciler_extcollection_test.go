package e2e

import (
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/test/graphs"
)

// extCollectionGraph reads every ConfigMap of the instance's namespace
// labelled team=<spec.team> (an external collection), ready when each says
// ready, and summarises them in a ConfigMap it owns.
var extCollectionGraph = graphs.RGD("rtextcoll", "RtExtcoll", `spec:
  team: string | default=a
status:
  count: ${size(cms)}
  names: ${cms.map(c, c.metadata.name).join(",")}`,
	graphs.Resource("cms", `readyWhen:
- ${each.data.ready == "true"}
externalRef:
  apiVersion: v1
  kind: ConfigMap
  metadata:
    namespace: ${schema.metadata.namespace}
    selector:
      matchLabels:
        team: ${schema.spec.team}`),
	graphs.ConfigMap("summary", "${schema.metadata.name}-summary", "count: ${string(size(cms))}\nnames: ${cms.map(c, c.metadata.name).join(\",\")}"))

// teamConfigMap creates (or, when it exists, updates) a ConfigMap in ns
// with the given labels and data.
func teamConfigMap(t *testing.T, r *rig, ns, name string, labels map[string]string, ready string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"ready": ready}}}
	u.SetName(name)
	u.SetNamespace(ns)
	u.SetLabels(labels)
	ri := r.dyn.Resource(gvrConfigMap).Namespace(ns)
	if cur, err := ri.Get(ctxT(t), name, metav1.GetOptions{}); err == nil {
		u.SetResourceVersion(cur.GetResourceVersion())
		out, err := ri.Update(ctxT(t), u, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	out, err := ri.Create(ctxT(t), u, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (r *rig) summaryData(t *testing.T, name, key string) any {
	t.Helper()
	cm := r.get(gvrConfigMap, r.ns, name+"-summary")
	if cm == nil {
		return nil
	}
	return cm.Object["data"].(map[string]any)[key]
}

func TestReconcilerExtcollection(t *testing.T) {
	r := newRig(t, extCollectionGraph)
	teamA := map[string]string{"team": "a"}
	teamConfigMap(t, r, r.ns, "c2", teamA, "true")
	teamConfigMap(t, r, r.ns, "c1", teamA, "true")
	teamConfigMap(t, r, r.ns, "other", map[string]string{"team": "b"}, "true")
	// The same label in another namespace is not read: the ref names the
	// instance's.
	otherNS := r.env.Namespace(t)
	teamConfigMap(t, r, otherNS, "elsewhere", teamA, "true")

	r.create(`apiVersion: kro.run/v1alpha1
kind: RtExtcoll
metadata:
  name: app
spec: {}
`)
	o := r.untilState("app", reconciler.InstanceStateActive)
	if got := r.summaryData(t, "app", "count"); got != "2" {
		t.Fatalf("summary count = %v, want 2", got)
	}
	if got := r.summaryData(t, "app", "names"); got != "c1,c2" {
		t.Errorf("summary names = %v, want c1,c2 (sorted)", got)
	}
	d := o.Resources["cms"]
	if d.State != reconciler.ResourceStateSynced || d.Observed.GetKind() != "List" || d.Desired.GetKind() != "List" || !d.External {
		t.Errorf("cms detail: state %s observed %v desired %v external %v", d.State, d.Observed.GetKind(), d.Desired.GetKind(), d.External)
	}
	st := r.instance("app").Object["status"].(map[string]any)
	if st["count"] != int64(2) || st["names"] != "c1,c2" {
		t.Errorf("status count %v names %v", st["count"], st["names"])
	}

	// A third matching object: not ready yet, so the summary is held back
	// and the instance says which item waits.
	teamConfigMap(t, r, r.ns, "c3", teamA, "false")
	o = r.until("app", 90*time.Second, "cms waiting", func(o reconciler.Observation, _ error) bool {
		return o.Resources["cms"].State == reconciler.ResourceStateWaitingForReadiness
	})
	if w := o.Resources["cms"].WaitingFor; !strings.Contains(w, "1 of 3 items not ready; item "+r.ns+"/c3: ") || !strings.Contains(w, "each.data.ready") {
		t.Errorf("cms waiting for %q", w)
	}
	if o.State.State != reconciler.InstanceStateInProgress || o.Resources["summary"].State != reconciler.ResourceStatePending {
		t.Errorf("instance %s, summary %s; want IN_PROGRESS and PENDING", o.State.State, o.Resources["summary"].State)
	}
	if got := r.summaryData(t, "app", "count"); got != "2" {
		t.Errorf("summary count = %v while c3 is not ready, want 2", got)
	}
	// Status reads every item even while one is not ready.
	r.until("app", 30*time.Second, "status count 3", func(reconciler.Observation, error) bool {
		st, _ := r.instance("app").Object["status"].(map[string]any)
		return st["count"] == int64(3)
	})

	c3 := teamConfigMap(t, r, r.ns, "c3", teamA, "true")
	r.until("app", 90*time.Second, "summary says 3", func(o reconciler.Observation, _ error) bool {
		return o.State.State == reconciler.InstanceStateActive && r.summaryData(t, "app", "count") == "3"
	})
	if got := r.summaryData(t, "app", "names"); got != "c1,c2,c3" {
		t.Errorf("summary names = %v, want c1,c2,c3", got)
	}
	if got := r.WritesBy(); strings.Contains(strings.Join(flatten(got), " "), "/configmaps/c") {
		t.Errorf("an external object was written: %v", got)
	}

	// An empty result is ready.
	r.create(`apiVersion: kro.run/v1alpha1
kind: RtExtcoll
metadata:
  name: nobody
spec:
  team: nobody
`)
	o = r.untilState("nobody", reconciler.InstanceStateActive)
	if o.Resources["cms"].State != reconciler.ResourceStateSynced || r.summaryData(t, "nobody", "count") != "0" {
		t.Errorf("empty collection: cms %s, summary %v", o.Resources["cms"].State, r.summaryData(t, "nobody", "count"))
	}

	// A selector that renders an invalid label value fails naming the path.
	r.create(`apiVersion: kro.run/v1alpha1
kind: RtExtcoll
metadata:
  name: bad
spec:
  team: "not a label value!"
`)
	o = r.until("bad", 90*time.Second, "cms failed", func(o reconciler.Observation, _ error) bool {
		return o.Resources["cms"].State == reconciler.ResourceStateFailed
	})
	if err := o.Resources["cms"].Err; err == nil || !strings.Contains(err.Error(), "externalRef.metadata.selector") {
		t.Errorf("bad selector error: %v", err)
	}

	// Deleting the instance deletes what it owns, never the external objects.
	r.deleteInstance("app")
	r.untilGone("app")
	if r.get(gvrConfigMap, r.ns, "app-summary") != nil {
		t.Error("summary left after deletion")
	}
	for _, n := range []string{"c1", "c2", "c3", "other"} {
		if r.get(gvrConfigMap, r.ns, n) == nil {
			t.Errorf("external ConfigMap %s was deleted with the instance", n)
		}
	}
	if got := r.get(gvrConfigMap, r.ns, "c3"); got.GetResourceVersion() != c3.GetResourceVersion() {
		t.Errorf("c3 was modified: resourceVersion %s, was %s", got.GetResourceVersion(), c3.GetResourceVersion())
	}
}

func flatten(m map[string][]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v...)
	}
	return out
}

// A ServiceAccount that may not list the kind gets ERROR with the API
// server's forbidden message, naming the selector.
func TestReconcilerExtcollectionForbidden(t *testing.T) {
	r := newRig(t, extCollectionGraph, func(c *rigConfig) { c.sas = map[string]string{"*": "limited"} })
	grant(t, r, "limited", []rbacv1.PolicyRule{instanceRules(r)})
	r.create(`apiVersion: kro.run/v1alpha1
kind: RtExtcoll
metadata:
  name: app
spec: {}
`)
	o := r.until("app", 60*time.Second, "ERROR", func(o reconciler.Observation, _ error) bool {
		return o.State.State == reconciler.InstanceStateError
	})
	d := o.Resources["cms"]
	if d.State != reconciler.ResourceStateError || d.Err == nil || !strings.Contains(d.Err.Error(), "forbidden") ||
		!strings.Contains(d.Err.Error(), "system:serviceaccount:"+r.ns+":limited") || !strings.Contains(d.Err.Error(), `selector "team=a"`) {
		t.Fatalf("cms: %s %v; want ERROR with the API server's forbidden message", d.State, d.Err)
	}
}

// Observe mode reads the collection the same way (and writes nothing).
func TestReconcilerExtcollectionObserve(t *testing.T) {
	r := newRig(t, extCollectionGraph, func(c *rigConfig) { c.opts.Observe = true })
	teamConfigMap(t, r, r.ns, "c1", map[string]string{"team": "a"}, "true")
	teamConfigMap(t, r, r.ns, "c2", map[string]string{"team": "a"}, "false")
	r.create(`apiVersion: kro.run/v1alpha1
kind: RtExtcoll
metadata:
  name: app
spec: {}
`)
	o := r.until("app", 60*time.Second, "cms waiting", func(o reconciler.Observation, _ error) bool {
		return o.Resources["cms"] != nil && o.Resources["cms"].State == reconciler.ResourceStateWaitingForReadiness
	})
	if w := o.Resources["cms"].WaitingFor; !strings.Contains(w, "1 of 2 items not ready; item "+r.ns+"/c2") {
		t.Errorf("cms waiting for %q", w)
	}
	if items, _ := o.Resources["cms"].Observed.Object["items"].([]any); len(items) != 2 {
		t.Errorf("observed %d items, want 2", len(items))
	}
	teamConfigMap(t, r, r.ns, "c2", map[string]string{"team": "a"}, "true")
	r.until("app", 60*time.Second, "cms synced", func(o reconciler.Observation, _ error) bool {
		return o.Resources["cms"].State == reconciler.ResourceStateSynced
	})
	for _, p := range flatten(r.WritesBy()) {
		if strings.Contains(p, "/configmaps") {
			t.Errorf("observe mode wrote %s", p)
		}
	}
}
