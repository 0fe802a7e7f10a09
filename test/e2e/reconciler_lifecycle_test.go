package e2e

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/metadata"
	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/graphs"
)

// chainGraph is first → second (reads first), plus extra (includeWhen) and
// a status projection.
func chainGraph(kind string) string {
	return graphs.RGD(strings.ToLower(kind), kind, `spec:
  value: string | default=one
  withExtra: boolean | default=true
status:
  seen: ${second.data.copy}`,
		graphs.ConfigMap("first", "${schema.metadata.name}-first", "value: ${schema.spec.value}"),
		graphs.ConfigMap("second", "${schema.metadata.name}-second", "copy: ${first.data.value}"),
		graphs.ConfigMap("extra", "${schema.metadata.name}-extra", "value: ${schema.spec.value}", "includeWhen:\n- ${schema.spec.withExtra}"))
}

func chainInstance(kind, name string) string {
	return "apiVersion: kro.run/v1alpha1\nkind: " + kind + "\nmetadata:\n  name: " + name + "\nspec:\n  value: one\n"
}

func cmData(t *testing.T, r *rig, name, key string) string {
	t.Helper()
	cm := r.get(gvrConfigMap, r.ns, name)
	if cm == nil {
		t.Fatalf("ConfigMap %s does not exist", name)
	}
	return cm.Object["data"].(map[string]any)[key].(string)
}

func TestReconcilerCreateToActive(t *testing.T) {
	r := newRig(t, chainGraph("RtCreate"))
	inst := r.create(chainInstance("RtCreate", "app"))

	o := r.untilState("app", reconciler.InstanceStateActive)
	for _, id := range []string{"first", "second", "extra"} {
		d := o.Resources[id]
		if d.State != reconciler.ResourceStateSynced {
			t.Errorf("resource %s: state %s, want SYNCED", id, d.State)
		}
		if d.Desired == nil || d.Observed == nil || d.Name != "app-"+id || d.Namespace != r.ns || d.GVK.Kind != "ConfigMap" {
			t.Errorf("resource %s detail incomplete: %+v", id, d)
		}
	}
	if o.Start.IsZero() || o.Duration <= 0 || o.UID != inst.GetUID() || o.Generation != 1 {
		t.Errorf("observation start %v duration %v uid %s generation %d", o.Start, o.Duration, o.UID, o.Generation)
	}
	cm := r.get(gvrConfigMap, r.ns, "app-second")
	if cm == nil {
		t.Fatal("app-second was not created")
	}
	if got := cm.Object["data"].(map[string]any)["copy"]; got != "one" {
		t.Errorf("second.data.copy = %v, want one", got)
	}
	want := metadata.ChildLabels(metadata.InstanceRef{UID: inst.GetUID(), Name: "app", Namespace: r.ns,
		Group: "kro.run", Version: "v1alpha1", Kind: "RtCreate"}, "second")
	for k, v := range want {
		if cm.GetLabels()[k] != v {
			t.Errorf("label %s = %q, want %q", k, cm.GetLabels()[k], v)
		}
	}
	refs := cm.GetOwnerReferences()
	if len(refs) != 1 || refs[0].UID != inst.GetUID() || refs[0].Kind != "RtCreate" {
		t.Errorf("owner references %+v, want one to the instance", refs)
	}
	managedBy := map[string]bool{}
	for _, mf := range cm.GetManagedFields() {
		managedBy[mf.Manager+"/"+string(mf.Operation)] = true
	}
	if !managedBy[metadata.FieldManager+"/Apply"] {
		t.Errorf("managedFields %v: want an Apply entry by %s", managedBy, metadata.FieldManager)
	}

	live := r.instance("app")
	if got, _ := live.Object["status"].(map[string]any)["seen"]; got != "one" {
		t.Errorf("status.seen = %v, want one", got)
	}
	if got := live.Object["status"].(map[string]any)["state"]; got != "ACTIVE" {
		t.Errorf("status.state = %v", got)
	}
	if !containsString(live.GetFinalizers(), metadata.Finalizer) {
		t.Errorf("finalizers %v lack %s", live.GetFinalizers(), metadata.Finalizer)
	}
	for _, typ := range []string{"Ready", "InstanceManaged", "GraphResolved", "ResourcesReady"} {
		c := envtest.Condition(live, typ)
		if c == nil || c["status"] != "True" {
			t.Errorf("condition %s = %v, want True", typ, c)
			continue
		}
		if c["observedGeneration"] != live.GetGeneration() {
			t.Errorf("condition %s observedGeneration %v, want %d", typ, c["observedGeneration"], live.GetGeneration())
		}
	}
	// lastTransitionTime stays put while the status does not change.
	before := envtest.Condition(live, "Ready")["lastTransitionTime"]
	r.untilState("app", reconciler.InstanceStateActive)
	if after := envtest.Condition(r.instance("app"), "Ready")["lastTransitionTime"]; after != before {
		t.Errorf("Ready lastTransitionTime moved from %v to %v without a status change", before, after)
	}
}

func TestReconcilerSpecChangePropagates(t *testing.T) {
	r := newRig(t, chainGraph("RtSpec"))
	r.create(chainInstance("RtSpec", "app"))
	r.untilState("app", reconciler.InstanceStateActive)

	r.patchSpec("app", map[string]any{"value": "two"})
	r.until("app", 90*time.Second, "second copies two", func(o reconciler.Observation, _ error) bool {
		return o.State.State == reconciler.InstanceStateActive && cmData(t, r, "app-second", "copy") == "two"
	})
	if got := cmData(t, r, "app-first", "value"); got != "two" {
		t.Errorf("first.data.value = %q, want two", got)
	}
	live := r.instance("app")
	if got := live.Object["status"].(map[string]any)["seen"]; got != "two" {
		t.Errorf("status.seen = %v, want two", got)
	}
	if c := envtest.Condition(live, "Ready"); c["observedGeneration"] != live.GetGeneration() {
		t.Errorf("Ready observedGeneration %v, generation %d", c["observedGeneration"], live.GetGeneration())
	}
}

func TestReconcilerRecreatesDeletedChild(t *testing.T) {
	r := newRig(t, chainGraph("RtRecreate"))
	r.create(chainInstance("RtRecreate", "app"))
	r.untilState("app", reconciler.InstanceStateActive)
	old := r.get(gvrConfigMap, r.ns, "app-first")

	if err := r.dyn.Resource(gvrConfigMap).Namespace(r.ns).Delete(ctxT(t), "app-first", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	r.until("app", 90*time.Second, "app-first recreated and ACTIVE", func(o reconciler.Observation, _ error) bool {
		cm := r.get(gvrConfigMap, r.ns, "app-first")
		return o.State.State == reconciler.InstanceStateActive && cm != nil && cm.GetUID() != old.GetUID()
	})
}

func TestReconcilerCorrectsEditedChild(t *testing.T) {
	r := newRig(t, chainGraph("RtEdit"))
	r.create(chainInstance("RtEdit", "app"))
	r.untilState("app", reconciler.InstanceStateActive)

	// A person edits the child with a plain update (kubectl edit does that).
	cm := r.get(gvrConfigMap, r.ns, "app-first")
	cm.Object["data"].(map[string]any)["value"] = "hand-edited"
	if _, err := r.dyn.Resource(gvrConfigMap).Namespace(r.ns).Update(ctxT(t), cm, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	r.until("app", 90*time.Second, "edit reverted", func(o reconciler.Observation, _ error) bool {
		return o.State.State == reconciler.InstanceStateActive && cmData(t, r, "app-first", "value") == "one"
	})
}

func TestReconcilerIncludeWhenPrunesAndRestores(t *testing.T) {
	r := newRig(t, chainGraph("RtInclude"))
	r.create(chainInstance("RtInclude", "app"))
	r.untilState("app", reconciler.InstanceStateActive)
	if r.get(gvrConfigMap, r.ns, "app-extra") == nil {
		t.Fatal("app-extra missing while included")
	}

	r.patchSpec("app", map[string]any{"withExtra": false})
	o := r.until("app", 90*time.Second, "extra pruned", func(o reconciler.Observation, _ error) bool {
		return o.State.State == reconciler.InstanceStateActive && r.get(gvrConfigMap, r.ns, "app-extra") == nil
	})
	if got := o.Resources["extra"].State; got != reconciler.ResourceStateSkipped {
		t.Errorf("extra state %s, want SKIPPED", got)
	}

	r.patchSpec("app", map[string]any{"withExtra": true})
	r.until("app", 90*time.Second, "extra restored", func(o reconciler.Observation, _ error) bool {
		return o.State.State == reconciler.InstanceStateActive && r.get(gvrConfigMap, r.ns, "app-extra") != nil
	})
}

func containsString(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func TestReconcilerEventsOnStateChangesOnly(t *testing.T) {
	r := newRig(t, chainGraph("RtEvents"))
	r.create(chainInstance("RtEvents", "app"))
	r.untilState("app", reconciler.InstanceStateActive)
	for range 5 { // converged reconciles must not announce anything
		if _, err := r.reconcile("app"); err != nil {
			t.Fatal(err)
		}
	}

	// A problem is announced, and so is the way out of it: replace a child
	// by an object kroscope does not own, then remove that object.
	cms := r.dyn.Resource(gvrConfigMap).Namespace(r.ns)
	if err := cms.Delete(ctxT(t), "app-second", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	foreign := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "app-second", "namespace": r.ns}}}
	if _, err := cms.Create(ctxT(t), foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r.untilState("app", reconciler.InstanceStateError)
	if err := cms.Delete(ctxT(t), "app-second", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	r.untilState("app", reconciler.InstanceStateActive)

	type seen struct {
		count    int32
		messages []string
	}
	events := func() map[string]*seen {
		list, err := r.env.Kubernetes().CoreV1().Events(r.ns).List(ctxT(t), metav1.ListOptions{FieldSelector: "involvedObject.name=app"})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]*seen{}
		for _, e := range list.Items {
			if out[e.Reason] == nil {
				out[e.Reason] = &seen{}
			}
			out[e.Reason].count += e.Count
			out[e.Reason].messages = append(out[e.Reason].messages, e.Type+": "+e.Message)
		}
		return out
	}
	// Events are sent in the order they were recorded: once the recovery is
	// there, everything recorded before it is too.
	deadline := time.Now().Add(30 * time.Second)
	var got map[string]*seen
	for time.Now().Before(deadline) {
		if got = events(); got["StateActive"] != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	active, failed := got["StateActive"], got["StateError"]
	if active == nil || active.count != 1 || !strings.HasPrefix(active.messages[0], "Normal: ERROR -> ACTIVE") {
		t.Fatalf("StateActive events %+v: want exactly one, for the recovery (a new instance going ACTIVE is not announced)", active)
	}
	if failed == nil || failed.count != 1 || !strings.HasPrefix(failed.messages[0], "Warning: ACTIVE -> ERROR") || !strings.Contains(failed.messages[0], "app-second") {
		t.Errorf("StateError events %+v: want one Warning naming the object", failed)
	}
	if got["StateInProgress"] != nil {
		t.Errorf("StateInProgress events %+v: want none", got["StateInProgress"])
	}
}

var renameGraph = graphs.RGD("rtrename", "RtRename", "spec:\n  suffix: string | default=a",
	graphs.ConfigMap("config", "${schema.metadata.name}-${schema.spec.suffix}", "k: v"))

// A templated name that changes leaves no orphan behind.
func TestReconcilerRenamedChildReplacesOld(t *testing.T) {
	r := newRig(t, renameGraph)
	r.create("apiVersion: kro.run/v1alpha1\nkind: RtRename\nmetadata:\n  name: app\nspec: {}\n")
	r.untilState("app", reconciler.InstanceStateActive)
	r.patchSpec("app", map[string]any{"suffix": "b"})
	r.until("app", 60*time.Second, "renamed", func(o reconciler.Observation, _ error) bool {
		return o.State.State == reconciler.InstanceStateActive && r.get(gvrConfigMap, r.ns, "app-b") != nil
	})
	if r.get(gvrConfigMap, r.ns, "app-a") != nil {
		t.Error("the object under the old name was left behind")
	}
}

// TestReconcilerInstanceWithoutSpec: the API server admits an instance
// without spec whose graph requires spec fields (kro's instance CRD
// requires nothing at the root, and kroscope's equals it). kroscope FAILs
// it at once, naming the missing fields, and creates nothing; given a spec,
// it reconciles to ACTIVE.
func TestReconcilerInstanceWithoutSpec(t *testing.T) {
	r := newRig(t, graphs.RGD("rt-nospec", "RtNoSpec", `spec:
  name: string | required=true
  size: integer | required=true
  note: string | default=hi`,
		graphs.ConfigMap("cm", "${schema.spec.name}", "size: ${string(schema.spec.size)}")))
	r.create("apiVersion: kro.run/v1alpha1\nkind: RtNoSpec\nmetadata:\n  name: bare\n")
	o := r.untilState("bare", reconciler.InstanceStateFailed)
	want := "the instance has no spec, and RtNoSpec requires spec.name, spec.size: add a spec that sets them"
	if o.Message != want {
		t.Errorf("message %q, want %q", o.Message, want)
	}
	if st := r.instance("bare").Object["status"].(map[string]any); st["state"] != reconciler.InstanceStateFailed {
		t.Errorf("status %v", st)
	}
	list, err := r.dyn.Resource(gvrConfigMap).Namespace(r.ns).List(ctxT(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range list.Items {
		if cm.GetLabels()[metadata.InstanceIDLabel] != "" {
			t.Errorf("ConfigMap %s created for an instance without spec", cm.GetName())
		}
	}

	r.patchSpec("bare", map[string]any{"name": "bare-cm", "size": int64(3)})
	r.untilState("bare", reconciler.InstanceStateActive)
	if got := cmData(t, r, "bare-cm", "size"); got != "3" {
		t.Errorf("bare-cm size %q", got)
	}
}
