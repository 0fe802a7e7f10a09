package e2e

import (
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/confine"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/graphs"
)

var gvrSecret = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// kroApplySetID computes an ApplySet parent id the way KEP-3659 and kro
// define it, written out here so the test does not trust the code under
// test: applyset-<base64url(sha256("name.namespace.Kind.group"))>-v1.
func kroApplySetID(name, ns, kind, group string) string {
	sum := sha256.Sum256([]byte(name + "." + ns + "." + kind + "." + group))
	return "applyset-" + base64.RawURLEncoding.EncodeToString(sum[:]) + "-v1"
}

// kroInventoryHash is kro's internal.kro.run/applyset-inventory-hash.
func kroInventoryHash(id, kinds, namespaces string) string {
	sum := sha256.Sum256([]byte(id + "\x00" + kinds + "\x00" + namespaces))
	return "sha256:" + base64.RawURLEncoding.EncodeToString(sum[:])
}

// metaGraph: a ConfigMap in the instance's namespace and one in another
// namespace that reads it, so the inventory has an additional namespace
// and two apply-order waves.
func metaGraph(kind string, withB bool) string {
	resources := []string{graphs.ConfigMap("a", "${schema.metadata.name}-a", "v: ${schema.spec.value}")}
	if withB {
		resources = append(resources, graphs.Resource("b", `template:
  apiVersion: v1
  kind: ConfigMap
  metadata:
    name: ${schema.metadata.name}-b
    namespace: ${schema.spec.other}
  data:
    v: ${a.data.v}`))
	}
	return graphs.RGD(strings.ToLower(kind), kind, "spec:\n  other: string | default=default\n  value: string | default=x", resources...)
}

// otherNamespace is the grant metaGraph's b needs: its namespace comes
// from the instance's spec (the graph's kroscope.dev/children-scope:
// Cluster, for the engine).
var otherNamespace = confine.Grant{AnyNamespace: true}

// swapGraph replaces the rig's controller with one serving yaml (same
// kind), as the engine does when a graph changes.
func (r *rig) swapGraph(yaml string) {
	r.t.Helper()
	rgds, err := graph.Parse([]byte(yaml), r.t.Name())
	if err != nil {
		r.t.Fatal(err)
	}
	g, err := graph.NewBuilder(graph.WithRESTMapper(r.cs.RESTMapper())).Build(rgds[0])
	if err != nil {
		r.t.Fatal(err)
	}
	r.g = g
	r.c = reconciler.NewController(logr.Discard(), reconciler.ReconcileConfig{DefaultRequeueDuration: time.Second, DeletionGraceTimeDuration: time.Minute},
		g.Instance.GVR, g, r.cs, nil, metadata.NewGraphLabeler(g.Name, g.UID))
	r.c.SetObserver(func(o reconciler.Observation) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.obs[types.NamespacedName{Namespace: o.Namespace, Name: o.Name}] = o
	})
}

// TestReconcilerKroMetadata checks every kro label and annotation, with
// exact values, on the instance and on both children; the ApplySet id and
// inventory hash are computed independently.
func TestReconcilerKroMetadata(t *testing.T) {
	r := newRig(t, metaGraph("KmMeta", true), func(c *rigConfig) { c.graphUID = "rgd-uid-1"; c.opts.Grant = otherNamespace })
	other := r.env.Namespace(t)
	inst := r.create("apiVersion: kro.run/v1alpha1\nkind: KmMeta\nmetadata:\n  name: app\nspec:\n  other: " + other + "\n")
	r.untilState("app", reconciler.InstanceStateActive)

	id := kroApplySetID("app", r.ns, "KmMeta", "kro.run")
	inst = r.instance("app")
	wantInst := map[string]string{
		"kro.run/owned":                          "true",
		"kro.run/kro-version":                    "v0.9.4",
		"kro.run/resource-graph-definition-name": "kmmeta",
		"kro.run/resource-graph-definition-id":   "rgd-uid-1",
		"app.kubernetes.io/managed-by":           "kroscope",
		"applyset.kubernetes.io/id":              id,
	}
	for k, v := range wantInst {
		if got := inst.GetLabels()[k]; got != v {
			t.Errorf("instance label %s = %q, want %q", k, got, v)
		}
	}
	wantAnn := map[string]string{
		"applyset.kubernetes.io/tooling":               "kro/v0.9.4+kroscope",
		"applyset.kubernetes.io/contains-group-kinds":  "ConfigMap",
		"applyset.kubernetes.io/additional-namespaces": other,
		"internal.kro.run/applyset-inventory-hash":     kroInventoryHash(id, "ConfigMap", other),
	}
	for k, v := range wantAnn {
		if got := inst.GetAnnotations()[k]; got != v {
			t.Errorf("instance annotation %s = %q, want %q", k, got, v)
		}
	}

	for _, c := range []struct{ node, ns, order string }{{"a", r.ns, "1"}, {"b", other, "2"}} {
		child := r.get(gvrConfigMap, c.ns, "app-"+c.node)
		if child == nil {
			t.Fatalf("child %s missing", c.node)
		}
		want := map[string]string{
			"kro.run/owned":                  "true",
			"kro.run/kro-version":            "v0.9.4",
			"kro.run/instance-id":            string(inst.GetUID()),
			"kro.run/instance-name":          "app",
			"kro.run/instance-namespace":     r.ns,
			"kro.run/instance-group":         "kro.run",
			"kro.run/instance-version":       "v1alpha1",
			"kro.run/instance-kind":          "KmMeta",
			"kro.run/node-id":                c.node,
			"app.kubernetes.io/managed-by":   "kroscope",
			"applyset.kubernetes.io/part-of": id,
		}
		for k, v := range want {
			if got := child.GetLabels()[k]; got != v {
				t.Errorf("%s: label %s = %q, want %q", c.node, k, got, v)
			}
		}
		if _, ok := child.GetLabels()["kro.run/resource-graph-definition-id"]; ok {
			t.Errorf("%s: carries the graph id label, which kro keeps to instances", c.node)
		}
		if got := child.GetAnnotations()["internal.kro.run/apply-order"]; got != c.order {
			t.Errorf("%s: apply-order %q, want %q", c.node, got, c.order)
		}
	}
}

// TestReconcilerInventoryPrune: a resource removed from the graph is
// pruned through the inventory (its node label alone would never be
// listed again), and the inventory shrinks; a look-alike that copied the
// labels but was written by someone else survives prune and deletion.
func TestReconcilerInventoryPrune(t *testing.T) {
	r := newRig(t, metaGraph("KmPrune", true), func(c *rigConfig) { c.opts.Grant = otherNamespace })
	r.create("apiVersion: kro.run/v1alpha1\nkind: KmPrune\nmetadata:\n  name: app\nspec:\n  other: " + r.ns + "\n")
	r.untilState("app", reconciler.InstanceStateActive)
	b := r.get(gvrConfigMap, r.ns, "app-b")

	look := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "lookalike", "namespace": r.ns}, "data": map[string]any{"v": "mine"}}}
	look.SetLabels(b.GetLabels())
	look.SetAnnotations(map[string]string{"internal.kro.run/apply-order": "2"})
	// Its controller is an object of its own (which outlives the test, so
	// the garbage collector never removes the look-alike either).
	keeper, err := r.dyn.Resource(gvrConfigMap).Namespace(r.ns).Create(ctxT(t), &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "keeper", "namespace": r.ns}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	look.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "keeper", UID: keeper.GetUID(), Controller: &yes}})
	if _, err := r.dyn.Resource(gvrConfigMap).Namespace(r.ns).Create(ctxT(t), look, metav1.CreateOptions{FieldManager: "someone"}); err != nil {
		t.Fatal(err)
	}
	// A second look-alike without any owner reference: only managedFields
	// tell it apart.
	look2 := look.DeepCopy()
	look2.SetName("lookalike2")
	look2.SetOwnerReferences(nil)
	look2.SetResourceVersion("")
	if _, err := r.dyn.Resource(gvrConfigMap).Namespace(r.ns).Create(ctxT(t), look2, metav1.CreateOptions{FieldManager: "someone"}); err != nil {
		t.Fatal(err)
	}

	r.swapGraph(metaGraph("KmPrune", false))
	r.until("app", 60*time.Second, "b pruned", func(o reconciler.Observation, _ error) bool {
		return o.State.State == reconciler.InstanceStateActive && r.get(gvrConfigMap, r.ns, "app-b") == nil
	})
	for _, n := range []string{"lookalike", "lookalike2"} {
		if r.get(gvrConfigMap, r.ns, n) == nil {
			t.Fatalf("prune deleted %s, which only copied the labels", n)
		}
	}
	id := kroApplySetID("app", r.ns, "KmPrune", "kro.run")
	ann := r.instance("app").GetAnnotations()
	if got := ann["internal.kro.run/applyset-inventory-hash"]; got != kroInventoryHash(id, "ConfigMap", "") {
		t.Errorf("inventory hash after prune %q", got)
	}
	// kro refuses to delete through an inventory without this key, even
	// when it is empty.
	if ns, ok := ann["applyset.kubernetes.io/additional-namespaces"]; !ok || ns != "" {
		t.Errorf("additional-namespaces = %q (present %v), want present and empty", ns, ok)
	}

	r.deleteInstance("app")
	r.untilGone("app")
	if r.get(gvrConfigMap, r.ns, "app-a") != nil {
		t.Error("app-a left behind")
	}
	for _, n := range []string{"lookalike", "lookalike2"} {
		if r.get(gvrConfigMap, r.ns, n) == nil {
			t.Errorf("deletion removed %s, which only copied the labels", n)
		}
	}
}

// TestReconcilerDeletionReadsInventory: the instance is deleted while the
// graph no longer has resource b; b's child is found through the
// inventory and deleted.
func TestReconcilerDeletionReadsInventory(t *testing.T) {
	r := newRig(t, metaGraph("KmDelInv", true), func(c *rigConfig) { c.opts.Grant = otherNamespace })
	other := r.env.Namespace(t)
	r.create("apiVersion: kro.run/v1alpha1\nkind: KmDelInv\nmetadata:\n  name: app\nspec:\n  other: " + other + "\n")
	r.untilState("app", reconciler.InstanceStateActive)
	r.swapGraph(metaGraph("KmDelInv", false))
	r.deleteInstance("app")
	r.untilGone("app")
	for _, c := range [][2]string{{r.ns, "app-a"}, {other, "app-b"}} {
		if r.get(gvrConfigMap, c[0], c[1]) != nil {
			t.Errorf("%s/%s left behind", c[0], c[1])
		}
	}
}

// TestReconcilerAdoptsKroChild: a child kro made for this instance (kro's
// field manager, managed-by=kro, kro's labels, a different value) is
// adopted without a conflict and without being re-created.
func TestReconcilerAdoptsKroChild(t *testing.T) {
	r := newRig(t, metaGraph("KmAdopt", false))
	inst := r.create("apiVersion: kro.run/v1alpha1\nkind: KmAdopt\nmetadata:\n  name: app\nspec: {}\n")
	id := kroApplySetID("app", r.ns, "KmAdopt", "kro.run")
	kroChild := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "app-a", "namespace": r.ns}, "data": map[string]any{"v": "from-kro"}}}
	kroChild.SetLabels(map[string]string{
		"kro.run/owned": "true", "kro.run/kro-version": "v0.9.3",
		"kro.run/instance-id": string(inst.GetUID()), "kro.run/instance-name": "app", "kro.run/instance-namespace": r.ns,
		"kro.run/instance-group": "kro.run", "kro.run/instance-version": "v1alpha1", "kro.run/instance-kind": "KmAdopt",
		"kro.run/node-id": "a", "app.kubernetes.io/managed-by": "kro", "applyset.kubernetes.io/part-of": id,
	})
	kroChild.SetAnnotations(map[string]string{"internal.kro.run/apply-order": "1"})
	made, err := r.dyn.Resource(gvrConfigMap).Namespace(r.ns).Apply(ctxT(t), "app-a", kroChild, metav1.ApplyOptions{FieldManager: "kro.run/applyset", Force: true})
	if err != nil {
		t.Fatal(err)
	}

	o := r.until("app", 60*time.Second, "ACTIVE", func(o reconciler.Observation, _ error) bool {
		return o.State.State == reconciler.InstanceStateActive || o.State.State == reconciler.InstanceStateError
	})
	if o.State.State != reconciler.InstanceStateActive {
		t.Fatalf("state %s: %s\n%s", o.State.State, o.Message, describe(o))
	}
	got := r.get(gvrConfigMap, r.ns, "app-a")
	if got.GetUID() != made.GetUID() {
		t.Errorf("the child was re-created: uid %s, kro's was %s", got.GetUID(), made.GetUID())
	}
	if v, _, _ := unstructured.NestedString(got.Object, "data", "v"); v != "x" || got.GetLabels()["app.kubernetes.io/managed-by"] != "kroscope" {
		t.Errorf("not taken over: data.v %q, managed-by %q", v, got.GetLabels()["app.kubernetes.io/managed-by"])
	}
	r.deleteInstance("app")
	r.untilGone("app")
	if r.get(gvrConfigMap, r.ns, "app-a") != nil {
		t.Error("the adopted child was not deleted with the instance")
	}
}

// condGraph: a ConfigMap that is ready when spec.ready is "yes", and one
// whose name the spec chooses (to provoke a conflict).
var condGraph = graphs.RGD("kmcond", "KmCond", `spec:
  ready: string | default=no
  bname: string | default=""
  value: string | default=x`,
	graphs.ConfigMap("a", "${schema.metadata.name}-a", "ready: ${schema.spec.ready}\nv: ${schema.spec.value}", "readyWhen:\n- ${a.data.ready == \"yes\"}"),
	graphs.ConfigMap("b", "${schema.spec.bname}", "v: b", "includeWhen:\n- ${schema.spec.bname != \"\"}"))

func wantCond(t *testing.T, inst *unstructured.Unstructured, typ, status, reason, msgPrefix string) {
	t.Helper()
	c := envtest.Condition(inst, typ)
	if c == nil {
		t.Fatalf("no %s condition in %v", typ, inst.Object["status"])
	}
	msg, _ := c["message"].(string)
	if c["status"] != status || c["reason"] != reason || !strings.HasPrefix(msg, msgPrefix) {
		t.Errorf("%s = %s/%s %q, want %s/%s %q...", typ, c["status"], c["reason"], msg, status, reason, msgPrefix)
	}
}

// TestReconcilerKroConditions checks kro's condition types, reasons and
// messages for IN_PROGRESS, ACTIVE, ERROR and deleting, their order, and
// that the status is patched: a status field someone else writes survives.
func TestReconcilerKroConditions(t *testing.T) {
	r := newRig(t, condGraph, func(c *rigConfig) {
		c.crdMod = func(crd *apiextensionsv1.CustomResourceDefinition) {
			st := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"]
			st.Properties["note"] = apiextensionsv1.JSONSchemaProps{Type: "string"}
			crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"] = st
		}
	})
	r.create("apiVersion: kro.run/v1alpha1\nkind: KmCond\nmetadata:\n  name: app\nspec: {}\n")
	r.until("app", 60*time.Second, "waiting for readiness", func(o reconciler.Observation, _ error) bool {
		return o.State.State == reconciler.InstanceStateInProgress && envtest.Condition(r.instance("app"), "ResourcesReady") != nil
	})
	inst := r.instance("app")
	wantCond(t, inst, "InstanceManaged", "True", "Managed", "instance is properly managed with finalizers and labels")
	wantCond(t, inst, "GraphResolved", "True", "Resolved", "runtime graph created and all resources resolved")
	wantCond(t, inst, "ResourcesReady", "False", "NotReady", "awaiting resource readiness: ")
	wantCond(t, inst, "Ready", "False", "NotReady", "awaiting resource readiness: ")
	if s, _, _ := unstructured.NestedString(inst.Object, "status", "state"); s != "IN_PROGRESS" {
		t.Errorf("state %q", s)
	}
	conds, _, _ := unstructured.NestedSlice(inst.Object, "status", "conditions")
	if last := conds[len(conds)-1].(map[string]any); last["type"] != "Ready" || len(conds) != 4 {
		t.Errorf("conditions %v: want four, Ready last", conds)
	}
	readyLTT := envtest.Condition(inst, "InstanceManaged")["lastTransitionTime"]

	// Someone else's status field.
	if _, err := r.dyn.Resource(r.instanceGVR()).Namespace(r.ns).Patch(ctxT(t), "app", types.MergePatchType,
		[]byte(`{"status":{"note":"kept"}}`), metav1.PatchOptions{FieldManager: "someone"}, "status"); err != nil {
		t.Fatal(err)
	}
	r.patchSpec("app", map[string]any{"ready": "yes"})
	r.untilState("app", reconciler.InstanceStateActive)
	inst = r.instance("app")
	wantCond(t, inst, "ResourcesReady", "True", "AllResourcesReady", "all resources are created and ready")
	wantCond(t, inst, "Ready", "True", "Ready", "")
	if note, _, _ := unstructured.NestedString(inst.Object, "status", "note"); note != "kept" {
		t.Errorf("status.note = %q: the status write dropped someone else's field", note)
	}
	if got := envtest.Condition(inst, "InstanceManaged")["lastTransitionTime"]; got != readyLTT {
		t.Errorf("InstanceManaged lastTransitionTime moved from %v to %v without a change", readyLTT, got)
	}

	// ERROR: b's name is an object kroscope does not own.
	taken := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "taken", "namespace": r.ns}}}
	if _, err := r.dyn.Resource(gvrConfigMap).Namespace(r.ns).Create(ctxT(t), taken, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r.patchSpec("app", map[string]any{"bname": "taken"})
	r.untilState("app", reconciler.InstanceStateError)
	inst = r.instance("app")
	wantCond(t, inst, "ResourcesReady", "False", "NotReady", "resource error: ")
	wantCond(t, inst, "Ready", "False", "NotReady", "resource error: ")
	r.patchSpec("app", map[string]any{"bname": ""})
	r.untilState("app", reconciler.InstanceStateActive)

	// Deleting, held by a finalizer on the child.
	a := r.get(gvrConfigMap, r.ns, "app-a")
	a.SetFinalizers([]string{"e2e.kroscope.dev/hold"})
	if _, err := r.dyn.Resource(gvrConfigMap).Namespace(r.ns).Update(ctxT(t), a, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	r.deleteInstance("app")
	r.until("app", 30*time.Second, "deleting", func(o reconciler.Observation, _ error) bool {
		return o.State.State == reconciler.InstanceStateDeleting && o.Resources["a"].State == reconciler.ResourceStateDeleting
	})
	inst = r.instance("app")
	wantCond(t, inst, "ResourcesReady", "Unknown", "UnderDeletion", "deleting resources")
	if s, _, _ := unstructured.NestedString(inst.Object, "status", "state"); s != "DELETING" {
		t.Errorf("state while deleting %q", s)
	}
	a = r.get(gvrConfigMap, r.ns, "app-a")
	a.SetFinalizers(nil)
	if _, err := r.dyn.Resource(gvrConfigMap).Namespace(r.ns).Update(ctxT(t), a, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	r.untilGone("app")
}

// TestReconcilerSuspension: kro.run/reconcile: suspended (any case) stops
// every child write; the status says ReconciliationSuspended; removing the
// annotation resumes.
func TestReconcilerSuspension(t *testing.T) {
	r := newRig(t, metaGraph("KmSuspend", false))
	r.create("apiVersion: kro.run/v1alpha1\nkind: KmSuspend\nmetadata:\n  name: app\nspec: {}\n")
	r.untilState("app", reconciler.InstanceStateActive)

	annotate := func(v any) {
		t.Helper()
		body := mustJSON(t, map[string]any{"metadata": map[string]any{"annotations": map[string]any{"kro.run/reconcile": v}}})
		if _, err := r.dyn.Resource(r.instanceGVR()).Namespace(r.ns).Patch(ctxT(t), "app", types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	annotate("Suspended")
	r.patchSpec("app", map[string]any{"value": "changed"})
	o, err := r.reconcile("app")
	if err != nil || o.State.State != reconciler.InstanceStateSuspended {
		t.Fatalf("state %s (err %v), want SUSPENDED", o.State.State, err)
	}
	inst := r.instance("app")
	wantCond(t, inst, "ResourcesReady", "False", "ReconciliationSuspended", "reconciliation suspended via kro.run/reconcile annotation")
	wantCond(t, inst, "Ready", "False", "ReconciliationSuspended", "reconciliation suspended")
	if s, _, _ := unstructured.NestedString(inst.Object, "status", "state"); s != "ACTIVE" {
		t.Errorf("wire state while suspended %q, want the state it had", s)
	}
	before := r.Writes()
	for range 3 {
		if _, err := r.reconcile("app"); err != nil {
			t.Fatal(err)
		}
	}
	if w := r.Writes() - before; w != 0 {
		t.Errorf("%d writes while suspended, want 0: %v", w, r.FirstWrites())
	}
	if v, _, _ := unstructured.NestedString(r.get(gvrConfigMap, r.ns, "app-a").Object, "data", "v"); v != "x" {
		t.Errorf("child changed while suspended: v=%q", v)
	}

	annotate(nil)
	r.until("app", 60*time.Second, "resumed", func(o reconciler.Observation, _ error) bool {
		v, _, _ := unstructured.NestedString(r.get(gvrConfigMap, r.ns, "app-a").Object, "data", "v")
		return o.State.State == reconciler.InstanceStateActive && v == "changed"
	})
	wantCond(t, r.instance("app"), "ResourcesReady", "True", "AllResourcesReady", "")
}

// TestReconcilerPruneKindChange: resource a changes kind (ConfigMap to
// Secret) under the same id; the old ConfigMap is found through the
// inventory and pruned, and the inventory then records only Secret.
func TestReconcilerPruneKindChange(t *testing.T) {
	r := newRig(t, metaGraph("KmKind", false))
	r.create("apiVersion: kro.run/v1alpha1\nkind: KmKind\nmetadata:\n  name: app\nspec: {}\n")
	r.untilState("app", reconciler.InstanceStateActive)
	secretGraph := strings.Replace(strings.Replace(metaGraph("KmKind", false), "kind: ConfigMap", "kind: Secret", 1), "      data:\n", "      stringData:\n", 1)
	r.swapGraph(secretGraph)
	r.until("app", 60*time.Second, "the ConfigMap pruned", func(o reconciler.Observation, _ error) bool {
		return o.State.State == reconciler.InstanceStateActive && r.get(gvrConfigMap, r.ns, "app-a") == nil
	})
	if r.get(gvrSecret, r.ns, "app-a") == nil {
		t.Fatal("the Secret was not created")
	}
	id := kroApplySetID("app", r.ns, "KmKind", "kro.run")
	ann := r.instance("app").GetAnnotations()
	if ann["applyset.kubernetes.io/contains-group-kinds"] != "Secret" || ann["internal.kro.run/applyset-inventory-hash"] != kroInventoryHash(id, "Secret", "") {
		t.Errorf("inventory after the kind change: %v", ann)
	}
}
