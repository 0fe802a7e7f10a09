package e2e

import (
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/metadata"
	"github.com/kroscope/kroscope/test/graphs"
)

// foreachGraph is a ConfigMap collection, one item per spec.names entry,
// ready when its gate is open, and a summary that reads the collection.
var foreachGraph = graphs.RGD("rtforeach", "RtForeach", `spec:
  names: "[]string"
  gate: string | default=open
status:
  count: ${summary.data.count}
  names: ${cms.map(c, c.data.name)}`,
	graphs.ConfigMap("cms", "${schema.metadata.name}-${name}", "name: ${name}\ngate: ${schema.spec.gate}",
		"forEach:\n- name: ${schema.spec.names}\nreadyWhen:\n- ${each.data.gate == \"open\"}"),
	graphs.ConfigMap("summary", "${schema.metadata.name}-summary", "count: ${string(size(cms))}"))

// items lists the names of the instance's collection items in the
// namespace, by label (what deletion and pruning rely on too).
func (r *rig) items(t *testing.T, uid string) []string {
	t.Helper()
	list, err := r.dyn.Resource(gvrConfigMap).Namespace(r.ns).List(ctxT(t), metav1.ListOptions{
		LabelSelector: metadata.InstanceIDLabel + "=" + uid + "," + metadata.NodeIDLabel + "=cms",
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, it := range list.Items {
		if it.GetDeletionTimestamp() == nil {
			out = append(out, it.GetName())
		}
	}
	return out
}

func (r *rig) summaryCount(t *testing.T) any {
	t.Helper()
	cm := r.get(gvrConfigMap, r.ns, "app-summary")
	if cm == nil {
		return nil
	}
	return cm.Object["data"].(map[string]any)["count"]
}

func TestReconcilerForeach(t *testing.T) {
	r := newRig(t, foreachGraph)
	inst := r.create(`apiVersion: kro.run/v1alpha1
kind: RtForeach
metadata:
  name: app
spec:
  names: [a, b, c]
`)
	uid := string(inst.GetUID())

	// Create: one ConfigMap per name, labelled with index and size; the
	// summary and the status read the list.
	o := r.untilState("app", reconciler.InstanceStateActive)
	if got := r.items(t, uid); !reflect.DeepEqual(got, []string{"app-a", "app-b", "app-c"}) {
		t.Fatalf("items = %v", got)
	}
	for i, n := range []string{"a", "b", "c"} {
		l := r.get(gvrConfigMap, r.ns, "app-"+n).GetLabels()
		if l[metadata.CollectionIndexLabel] != string(rune('0'+i)) || l[metadata.CollectionSizeLabel] != "3" || !metadata.OwnedBy(l, inst.GetUID()) {
			t.Errorf("app-%s labels %v", n, l)
		}
	}
	if got := r.summaryCount(t); got != "3" {
		t.Errorf("summary count = %v, want 3", got)
	}
	d := o.Resources["cms"]
	if d.State != reconciler.ResourceStateSynced || d.Name != "" || d.Desired.GetKind() != "List" || d.Observed.GetKind() != "List" {
		t.Errorf("cms detail: state %s name %q desired %v observed %v", d.State, d.Name, d.Desired.GetKind(), d.Observed.GetKind())
	}
	if items, _ := d.Observed.Object["items"].([]any); len(items) != 3 {
		t.Errorf("observed list has %d items, want 3", len(items))
	}
	st := r.instance("app").Object["status"].(map[string]any)
	if st["count"] != "3" || !reflect.DeepEqual(st["names"], []any{"a", "b", "c"}) {
		t.Errorf("status count %v names %v", st["count"], st["names"])
	}
	uidA := r.get(gvrConfigMap, r.ns, "app-a").GetUID()

	// Remove one name: its item is pruned, the others stay.
	r.patchSpec("app", map[string]any{"names": []any{"a", "c"}})
	r.until("app", 90*time.Second, "b pruned", func(o reconciler.Observation, _ error) bool {
		return o.State.State == reconciler.InstanceStateActive && r.get(gvrConfigMap, r.ns, "app-b") == nil && r.summaryCount(t) == "2"
	})
	if got := r.items(t, uid); !reflect.DeepEqual(got, []string{"app-a", "app-c"}) {
		t.Errorf("items after removing b = %v", got)
	}
	if r.get(gvrConfigMap, r.ns, "app-a").GetUID() != uidA {
		t.Error("app-a was recreated; it should have stayed")
	}

	// Add one: created, and every item now says size 3.
	r.patchSpec("app", map[string]any{"names": []any{"a", "c", "d"}})
	r.until("app", 90*time.Second, "d created", func(o reconciler.Observation, _ error) bool {
		return o.State.State == reconciler.InstanceStateActive && r.summaryCount(t) == "3"
	})
	if got := r.items(t, uid); !reflect.DeepEqual(got, []string{"app-a", "app-c", "app-d"}) {
		t.Errorf("items after adding d = %v", got)
	}
	if l := r.get(gvrConfigMap, r.ns, "app-a").GetLabels(); l[metadata.CollectionSizeLabel] != "3" {
		t.Errorf("app-a size label %q, want 3", l[metadata.CollectionSizeLabel])
	}

	// readyWhen with each: close the gate, no item is ready, so the
	// collection waits and its dependent does not proceed.
	r.patchSpec("app", map[string]any{"gate": "closed"})
	o = r.until("app", 90*time.Second, "collection waiting", func(o reconciler.Observation, _ error) bool {
		return o.Resources["cms"].State == reconciler.ResourceStateWaitingForReadiness
	})
	if o.State.State != reconciler.InstanceStateInProgress || !strings.Contains(o.Resources["cms"].WaitingFor, "3 of 3 items not ready") {
		t.Errorf("state %s, cms waiting for %q", o.State.State, o.Resources["cms"].WaitingFor)
	}
	if s := o.Resources["summary"].State; s != reconciler.ResourceStatePending {
		t.Errorf("summary state %s, want PENDING while cms is not ready", s)
	}
	r.patchSpec("app", map[string]any{"gate": "open"})
	r.untilState("app", reconciler.InstanceStateActive)

	// An empty collection is ready and prunes every item.
	r.patchSpec("app", map[string]any{"names": []any{}})
	r.until("app", 90*time.Second, "empty collection", func(o reconciler.Observation, _ error) bool {
		return o.State.State == reconciler.InstanceStateActive && r.summaryCount(t) == "0"
	})
	if got := r.items(t, uid); len(got) != 0 {
		t.Errorf("items of the empty collection = %v", got)
	}

	// Deleting the instance deletes every item.
	r.patchSpec("app", map[string]any{"names": []any{"x", "y"}})
	r.until("app", 90*time.Second, "x and y", func(o reconciler.Observation, _ error) bool {
		return o.State.State == reconciler.InstanceStateActive && r.summaryCount(t) == "2"
	})
	r.deleteInstance("app")
	r.untilGone("app")
	if got := r.items(t, uid); len(got) != 0 {
		t.Errorf("items left after deletion: %v", got)
	}
	if r.get(gvrConfigMap, r.ns, "app-summary") != nil {
		t.Error("summary left after deletion")
	}
}

// An item that would overwrite an object kroscope does not own fails the
// collection with a message naming the item; the other items are applied,
// and once the object is gone the collection converges.
func TestReconcilerForeachItemConflict(t *testing.T) {
	r := newRig(t, foreachGraph)
	foreign := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "app-b", "namespace": r.ns},
		"data":     map[string]any{"mine": "yes"},
	}}
	if _, err := r.dyn.Resource(gvrConfigMap).Namespace(r.ns).Create(ctxT(t), foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r.create(`apiVersion: kro.run/v1alpha1
kind: RtForeach
metadata:
  name: app
spec:
  names: [a, b, c]
`)
	o := r.untilState("app", reconciler.InstanceStateError)
	d := o.Resources["cms"]
	if d.State != reconciler.ResourceStateError || d.Err == nil ||
		!strings.Contains(d.Err.Error(), "1 of 3 items failed") || !strings.Contains(d.Err.Error(), "item 1 (ConfigMap "+r.ns+"/app-b)") {
		t.Fatalf("cms: state %s err %v", d.State, d.Err)
	}
	if !strings.Contains(o.Message, "app-b") {
		t.Errorf("instance message does not name the item: %s", o.Message)
	}
	if r.get(gvrConfigMap, r.ns, "app-a") == nil || r.get(gvrConfigMap, r.ns, "app-c") == nil {
		t.Error("the other items were not applied")
	}
	if cm := r.get(gvrConfigMap, r.ns, "app-b"); cm.Object["data"].(map[string]any)["mine"] != "yes" || metadata.Owner(cm.GetLabels()) != "" {
		t.Errorf("the foreign object was touched: %v", cm.Object)
	}
	if r.get(gvrConfigMap, r.ns, "app-summary") != nil {
		t.Error("summary was created although its collection failed")
	}
	if err := r.dyn.Resource(gvrConfigMap).Namespace(r.ns).Delete(ctxT(t), "app-b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	r.untilState("app", reconciler.InstanceStateActive)
	if got := r.summaryCount(t); got != "3" {
		t.Errorf("summary count = %v, want 3", got)
	}
}
