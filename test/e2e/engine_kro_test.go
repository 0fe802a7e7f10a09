package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/test/graphs"
	"github.com/kroscope/kroscope/test/krocrds"
)

// installKroCRDsForEngine installs kro's real ResourceGraphDefinition and
// GraphRevision CRDs (not a stand-in), or skips the test when they are absent.
func installKroCRDsForEngine(t *testing.T, r *engRig) {
	t.Helper()
	r.env.InstallCRDs(t, krocrds.All(t)...)
}

// clusterRGD stores a graph through kro's CRD and deletes it at the end.
func (r *engRig) clusterRGD(doc string) *unstructured.Unstructured {
	r.t.Helper()
	u := r.applyYAML(graph.GroupVersionResource, "", doc)
	r.t.Cleanup(func() {
		_ = r.dyn.Resource(graph.GroupVersionResource).Delete(context.Background(), u.GetName(), metav1.DeleteOptions{})
	})
	return u
}

func (r *engRig) getRGD(name string) *unstructured.Unstructured {
	r.t.Helper()
	u, err := r.dyn.Resource(graph.GroupVersionResource).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		r.t.Fatalf("reading RGD %s: %v", name, err)
	}
	return u
}

// waitRGD polls the RGD until cond holds.
func (r *engRig) waitRGD(name, what string, timeout time.Duration, cond func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
	r.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		u := r.getRGD(name)
		if cond(u) {
			return u
		}
		if time.Now().After(deadline) {
			st, _ := json.MarshalIndent(u.Object["status"], "", "  ")
			r.t.Fatalf("timed out waiting for RGD %s: %s; status:\n%s", name, what, st)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func rgdState(u *unstructured.Unstructured) string {
	s, _, _ := unstructured.NestedString(u.Object, "status", "state")
	return s
}

// rgdCondition returns "status/reason/message" of a condition, "" if absent.
func rgdCondition(u *unstructured.Unstructured, t string) map[string]any {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == t {
			return m
		}
	}
	return nil
}

// A cluster graph kroscope serves gets the status kro writes: state
// Active, kro's five conditions with kro's reasons (Ready last),
// topologicalOrder and resources[].dependencies; `kubectl get rgd` shows
// STATE Active and READY True. Once written, an idle engine writes nothing
// more (the RGD's resourceVersion stays), and a graph that stops compiling
// gets GraphAccepted False with kro's reason and the error.
func TestEngineWritesRGDStatus(t *testing.T) {
	r := newEngRig(t)
	installKroCRDsForEngine(t, r)
	rgd := r.clusterRGD(graphs.Chain("engkrostatus", "EngKroStatus"))
	run := r.start(func(o *engine.Options) { o.WatchClusterRGDs = true })
	run.graphServed("engkrostatus")

	u := r.waitRGD(rgd.GetName(), "state Active", time.Minute, func(u *unstructured.Unstructured) bool { return rgdState(u) == "Active" })
	want := []string{"GraphAccepted=True/Valid", "GraphRevisionsResolved=True/Resolved", "KindReady=True/Ready", "ControllerReady=True/Running", "Ready=True/Ready"}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var got []string
	for _, c := range conds {
		m := c.(map[string]any)
		got = append(got, fmt.Sprintf("%v=%v/%v", m["type"], m["status"], m["reason"]))
		if fmt.Sprint(m["observedGeneration"]) != fmt.Sprint(u.GetGeneration()) {
			t.Errorf("condition %v: observedGeneration %v, want %d", m["type"], m["observedGeneration"], u.GetGeneration())
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("conditions\n got %v\nwant %v", got, want)
	}
	if m := rgdCondition(u, "KindReady"); m["message"] != "kind EngKroStatus has been accepted and ready" {
		t.Errorf("KindReady message %q", m["message"])
	}
	order, _, _ := unstructured.NestedStringSlice(u.Object, "status", "topologicalOrder")
	if strings.Join(order, ",") != "a,b,c" {
		t.Errorf("topologicalOrder %v", order)
	}
	res, _, _ := unstructured.NestedSlice(u.Object, "status", "resources")
	resJSON, _ := json.Marshal(res)
	if string(resJSON) != `[{"dependencies":[{"id":"a"}],"id":"b"},{"dependencies":[{"id":"b"}],"id":"c"}]` {
		t.Errorf("resources %s", resJSON)
	}
	// The printer columns of kro's CRD, as kubectl shows them.
	table := map[string]any{}
	raw, err := r.env.Kubernetes().CoreV1().RESTClient().Get().AbsPath("/apis/kro.run/v1alpha1/resourcegraphdefinitions", rgd.GetName()).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal(raw, &table)
	cols, rows := table["columnDefinitions"].([]any), table["rows"].([]any)
	cells := rows[0].(map[string]any)["cells"].([]any)
	shown := map[string]any{}
	for i, c := range cols {
		shown[c.(map[string]any)["name"].(string)] = cells[i]
	}
	if shown["STATE"] != "Active" || shown["READY"] != "True" {
		t.Errorf("kubectl get rgd shows %v", shown)
	}

	// Idle: no further write, the object is untouched.
	rv := u.GetResourceVersion()
	before := run.Writes()
	time.Sleep(3 * time.Second)
	if n := run.Writes() - before; n != 0 {
		t.Errorf("%d writes while idle", n)
	}
	if now := r.getRGD(rgd.GetName()); now.GetResourceVersion() != rv {
		t.Errorf("RGD rewritten while idle: resourceVersion %s → %s", rv, now.GetResourceVersion())
	}

	// A graph that no longer compiles: GraphAccepted False, Inactive.
	broken := strings.Replace(graphs.Chain("engkrostatus", "EngKroStatus"), "${a.metadata.name}-b", "${nosuch.metadata.name}-b", 1)
	obj := map[string]any{}
	if err := yaml.Unmarshal([]byte(broken), &obj); err != nil {
		t.Fatal(err)
	}
	spec, _ := json.Marshal(map[string]any{"spec": obj["spec"]})
	if _, err := r.dyn.Resource(graph.GroupVersionResource).Patch(context.Background(), rgd.GetName(), types.MergePatchType, spec, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	u = r.waitRGD(rgd.GetName(), "GraphAccepted False", time.Minute, func(u *unstructured.Unstructured) bool {
		m := rgdCondition(u, "GraphAccepted")
		return m != nil && m["status"] == "False"
	})
	m := rgdCondition(u, "GraphAccepted")
	if m["reason"] != "InvalidResourceGraph" || !strings.Contains(fmt.Sprint(m["message"]), "nosuch") || rgdState(u) != "Inactive" {
		t.Errorf("broken graph: state %s, GraphAccepted %v", rgdState(u), m)
	}
	if ready := rgdCondition(u, "Ready"); ready["status"] != "False" || ready["reason"] != "InvalidResourceGraph" {
		t.Errorf("Ready %v", ready)
	}
}

// With --observe the RGD's status is never written.
func TestEngineObserveWritesNoRGDStatus(t *testing.T) {
	r := newEngRig(t)
	installKroCRDsForEngine(t, r)
	rgd := r.clusterRGD(graphs.Chain("engkroobserve", "EngKroObserve"))
	run := r.start(func(o *engine.Options) { o.WatchClusterRGDs = true; o.Observe = true })
	run.waitFor(time.Minute, "graph known", func(s *state.Snapshot) bool {
		for _, g := range s.Graphs {
			if g.Name == "engkroobserve" {
				return true
			}
		}
		return false
	})
	time.Sleep(2 * time.Second)
	if st := rgdState(r.getRGD(rgd.GetName())); st != "" {
		t.Errorf("observe mode wrote state %q", st)
	}
	if n := run.Writes(); n != 0 {
		t.Errorf("observe mode made %d writes", n)
	}
}

// A breaking schema change (a field removed) is refused: the graph is not
// served with the new spec, the RGD says KindReady False naming the field,
// and the CRD keeps it. With kro.run/allow-breaking-changes: "true" the
// change goes through.
func TestEngineBreakingChangeGuard(t *testing.T) {
	r := newEngRig(t)
	installKroCRDsForEngine(t, r)
	doc := strings.Replace(graphs.Chain("engkrobreak", "EngKroBreak"), "      value: string | default=one\n",
		"      value: string | default=one\n      tier: string | default=gold\n", 1)
	rgd := r.clusterRGD(doc)
	run := r.start(func(o *engine.Options) { o.WatchClusterRGDs = true })
	gvr := run.graphServed("engkrobreak")
	crdName := gvr.Resource + "." + gvr.Group
	r.waitRGD(rgd.GetName(), "Active", time.Minute, func(u *unstructured.Unstructured) bool { return rgdState(u) == "Active" })

	patch := []byte(`[{"op":"remove","path":"/spec/schema/spec/tier"}]`)
	if _, err := r.dyn.Resource(graph.GroupVersionResource).Patch(context.Background(), rgd.GetName(), types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	snap := run.waitFor(time.Minute, "breaking change refused", func(s *state.Snapshot) bool {
		for _, g := range s.Graphs {
			if g.Name == "engkrobreak" && !g.Served && strings.Contains(g.Err, "breaking") {
				return true
			}
		}
		return false
	})
	for _, g := range snap.Graphs {
		if g.Name == "engkrobreak" && !strings.Contains(g.Err, "spec.tier: property removed") {
			t.Errorf("graph error does not name the field: %s", g.Err)
		}
	}
	u := r.waitRGD(rgd.GetName(), "KindReady False", time.Minute, func(u *unstructured.Unstructured) bool {
		m := rgdCondition(u, "KindReady")
		return m != nil && m["status"] == "False"
	})
	if m := rgdCondition(u, "KindReady"); m["reason"] != "Failed" || !strings.Contains(fmt.Sprint(m["message"]), "spec.tier") || rgdState(u) != "Inactive" {
		t.Errorf("state %s KindReady %v", rgdState(u), m)
	}
	if !crdHasSpecField(t, r, crdName, "tier") {
		t.Fatal("the refused change reached the CRD")
	}

	allow := []byte(`{"metadata":{"annotations":{"kro.run/allow-breaking-changes":"true"}}}`)
	if _, err := r.dyn.Resource(graph.GroupVersionResource).Patch(context.Background(), rgd.GetName(), types.MergePatchType, allow, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	run.graphServed("engkrobreak")
	r.waitRGD(rgd.GetName(), "Active again", time.Minute, func(u *unstructured.Unstructured) bool { return rgdState(u) == "Active" })
	if crdHasSpecField(t, r, crdName, "tier") {
		t.Error("the allowed change did not reach the CRD")
	}
}

func crdHasSpecField(t *testing.T, r *engRig, name, field string) bool {
	t.Helper()
	u, err := r.dyn.Resource(crdGVRForTest).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
	v := versions[0].(map[string]any)
	_, found, _ := unstructured.NestedMap(v, "schema", "openAPIV3Schema", "properties", "spec", "properties", field)
	return found
}

// kroLease leaves the leader-election Lease a running kro holds.
func kroLease(t *testing.T, r *engRig) *coordinationv1.Lease {
	t.Helper()
	holder, dur, now := "kro-controller-7d9_1a2b", int32(15), metav1.NewMicroTime(time.Now())
	l, err := r.env.Kubernetes().CoordinationV1().Leases(r.ns).Create(context.Background(), &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "controller.kro.run", Namespace: r.ns},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &dur, AcquireTime: &now, RenewTime: &now},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Renewed like kro does (every 2s) until the test ends or deletes it.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		for ctx.Err() == nil {
			time.Sleep(2 * time.Second)
			cur, err := r.env.Kubernetes().CoordinationV1().Leases(r.ns).Get(ctx, l.Name, metav1.GetOptions{})
			if err != nil {
				return
			}
			renew := metav1.NewMicroTime(time.Now())
			cur.Spec.RenewTime = &renew
			_, _ = r.env.Kubernetes().CoordinationV1().Leases(r.ns).Update(ctx, cur, metav1.UpdateOptions{})
		}
	}()
	return l
}

// With kro's Lease held, kroscope makes no write at all (its own Lease
// included), and the state says why; once kro's Lease is gone kroscope
// campaigns and reconciles.
func TestEngineObservesWhileKroLeaseHeld(t *testing.T) {
	r := newEngRig(t)
	l := kroLease(t, r)
	path := r.writeFile("g.yaml", graphs.Chain("engkrolease", "EngKroLease"))
	ownLease := "kroscope-" + r.ns
	run := r.start(func(o *engine.Options) {
		o.RGDPaths = []string{path}
		o.DisableLease = false
		o.LeaseNamespace, o.LeaseName = r.ns, ownLease
		o.KroPollInterval = 300 * time.Millisecond
	})
	snap := run.waitFor(time.Minute, "observing kro", func(s *state.Snapshot) bool { return s.Mode.Kro != "" })
	want := "kro is reconciling this cluster (lease " + r.ns + "/controller.kro.run held by kro-controller-7d9_1a2b): observing; --take-over to reconcile"
	if snap.Mode.Kro != want || snap.Mode.Reconciling {
		t.Errorf("mode %+v\nwant Kro %q", snap.Mode, want)
	}
	time.Sleep(2 * time.Second)
	if n := run.Writes(); n != 0 {
		t.Errorf("%d writes while kro holds its lease", n)
	}
	if _, err := r.env.Kubernetes().CoordinationV1().Leases(r.ns).Get(context.Background(), ownLease, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("kroscope wrote its own Lease while kro runs (err %v)", err)
	}
	logged := false
	for _, line := range run.e.Snapshot().Logs {
		logged = logged || strings.Contains(line.Message, "kro is reconciling this cluster")
	}
	if !logged {
		t.Error("the log does not say kroscope observes kro")
	}

	// kro stops: its Lease goes away, kroscope reconciles.
	if err := r.env.Kubernetes().CoordinationV1().Leases(r.ns).Delete(context.Background(), l.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	run.waitFor(time.Minute, "reconciling", func(s *state.Snapshot) bool { return s.Mode.Reconciling && s.Mode.Kro == "" })
	run.graphServed("engkrolease")
}

// kro's Helm Deployment with a ready replica makes kroscope observe.
func TestEngineObservesKroDeployment(t *testing.T) {
	r := newEngRig(t)
	kube := r.env.Kubernetes()
	labels := map[string]string{"app.kubernetes.io/name": "kro", "app.kubernetes.io/instance": "kro",
		"app.kubernetes.io/part-of": "kro", "app.kubernetes.io/component": "controller"}
	one := int32(1)
	d, err := kube.AppsV1().Deployments(r.ns).Create(context.Background(), &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "kro", Namespace: r.ns, Labels: labels},
		Spec: appsv1.DeploymentSpec{Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "kro", "app.kubernetes.io/instance": "kro"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "kro", Image: "registry.k8s.io/kro/kro:v0.9.4"}}}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Status.Replicas, d.Status.ReadyReplicas, d.Status.AvailableReplicas = 1, 1, 1
	if _, err := kube.AppsV1().Deployments(r.ns).UpdateStatus(context.Background(), d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	path := r.writeFile("g.yaml", graphs.Chain("engkrodeploy", "EngKroDeploy"))
	run := r.start(func(o *engine.Options) { o.RGDPaths = []string{path}; o.KroPollInterval = 300 * time.Millisecond })
	snap := run.waitFor(time.Minute, "observing kro", func(s *state.Snapshot) bool { return s.Mode.Kro != "" })
	if !strings.Contains(snap.Mode.Kro, "Deployment "+r.ns+"/kro with 1 ready replica") || snap.Mode.Reconciling {
		t.Errorf("mode %+v", snap.Mode)
	}
	time.Sleep(time.Second)
	if n := run.Writes(); n != 0 {
		t.Errorf("%d writes while kro's Deployment runs", n)
	}
	// Its replica no longer ready (a kro crashing in a loop still writes
	// between crashes, a kro starting writes before it is ready): kro is
	// still taken for running.
	d, _ = kube.AppsV1().Deployments(r.ns).Get(context.Background(), "kro", metav1.GetOptions{})
	d.Status.ReadyReplicas, d.Status.AvailableReplicas = 0, 0
	if d, err = kube.AppsV1().Deployments(r.ns).UpdateStatus(context.Background(), d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	snap = run.waitFor(time.Minute, "kro no longer ready", func(s *state.Snapshot) bool { return strings.Contains(s.Mode.Kro, "none ready yet") })
	time.Sleep(time.Second)
	if n := run.Writes(); n != 0 || snap.Mode.Reconciling {
		t.Errorf("%d writes while kro's Deployment has a replica that is not ready: mode %+v", n, snap.Mode)
	}
	// Scaled to zero (no replica wanted or left): kroscope reconciles.
	zero := int32(0)
	d.Spec.Replicas = &zero
	if d, err = kube.AppsV1().Deployments(r.ns).Update(context.Background(), d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	d.Status.Replicas = 0
	if _, err := kube.AppsV1().Deployments(r.ns).UpdateStatus(context.Background(), d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	run.graphServed("engkrodeploy")
}

// An RGD whose status kro wrote (field manager kro) makes kroscope observe
// and show kro's view: its state and the GraphRevision it serves. With
// --take-over those old writes are ignored: kroscope reconciles and writes
// the status itself.
func TestEngineObservesKroWritesAndTakesOver(t *testing.T) {
	r := newEngRig(t)
	installKroCRDsForEngine(t, r)
	rgd := r.clusterRGD(graphs.Chain("engkrowrites", "EngKroWrites"))
	// kro's status, written with kro's field manager.
	status := []byte(`{"status":{"state":"Active","lastIssuedRevision":2,"topologicalOrder":["a","b","c"],"conditions":[
	 {"type":"GraphAccepted","status":"True","reason":"Valid","message":"resource graph and schema are valid","lastTransitionTime":"2026-01-01T00:00:00Z","observedGeneration":1},
	 {"type":"Ready","status":"True","reason":"Ready","message":"","lastTransitionTime":"2026-01-01T00:00:00Z","observedGeneration":1}]}}`)
	if _, err := r.dyn.Resource(graph.GroupVersionResource).Patch(context.Background(), rgd.GetName(), types.MergePatchType, status,
		metav1.PatchOptions{FieldManager: "kro"}, "status"); err != nil {
		t.Fatal(err)
	}
	for rev, verified := range map[int]string{1: "True", 2: "True"} {
		gr := r.applyYAML(graphRevisionGVRForTest, "", fmt.Sprintf(`apiVersion: internal.kro.run/v1alpha1
kind: GraphRevision
metadata:
  name: engkrowrites-r%05d
spec:
  revision: %d
  snapshot:
    name: engkrowrites
    generation: 1
    spec:
      schema: {apiVersion: v1alpha1, kind: EngKroWrites}
`, rev, rev))
		t.Cleanup(func() {
			_ = r.dyn.Resource(graphRevisionGVRForTest).Delete(context.Background(), gr.GetName(), metav1.DeleteOptions{})
		})
		grStatus := fmt.Sprintf(`{"status":{"conditions":[{"type":"GraphVerified","status":%q,"reason":"Verified","message":"graph revision compiled and verified","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`, verified)
		if _, err := r.dyn.Resource(graphRevisionGVRForTest).Patch(context.Background(), gr.GetName(), types.MergePatchType, []byte(grStatus),
			metav1.PatchOptions{FieldManager: "kro"}, "status"); err != nil {
			t.Fatal(err)
		}
	}

	run := r.start(func(o *engine.Options) { o.WatchClusterRGDs = true })
	snap := run.waitFor(time.Minute, "kro's view of the graph", func(s *state.Snapshot) bool {
		for _, g := range s.Graphs {
			if g.Name == "engkrowrites" && g.Kro != nil && g.Kro.Revision == 2 {
				return s.Mode.Kro != ""
			}
		}
		return false
	})
	if !strings.Contains(snap.Mode.Kro, "ResourceGraphDefinition engkrowrites written by field manager kro") {
		t.Errorf("mode %+v", snap.Mode)
	}
	for _, g := range snap.Graphs {
		if g.Name == "engkrowrites" && (g.Kro.State != "Active" || g.Kro.Summary() != "kro: Active, serving revision 2") {
			t.Errorf("kro view %+v (%s)", *g.Kro, g.Kro.Summary())
		}
	}
	time.Sleep(time.Second)
	if n := run.Writes(); n != 0 {
		t.Errorf("%d writes while kro's writes are the newest", n)
	}
	if err := run.stop(); err != nil {
		t.Fatal(err)
	}

	take := r.start(func(o *engine.Options) { o.WatchClusterRGDs = true; o.TakeOver = true })
	take.graphServed("engkrowrites")
	u := r.waitRGD(rgd.GetName(), "kroscope's status", time.Minute, func(u *unstructured.Unstructured) bool {
		m := rgdCondition(u, "ControllerReady")
		return m != nil && m["status"] == "True"
	})
	if s := take.e.Snapshot(); s.Mode.Kro != "" || !s.Mode.Reconciling || rgdState(u) != "Active" {
		t.Errorf("after --take-over: mode %+v, state %s", s.Mode, rgdState(u))
	}
}

var (
	crdGVRForTest           = apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")
	graphRevisionGVRForTest = schema.GroupVersionResource{Group: "internal.kro.run", Version: "v1alpha1", Resource: "graphrevisions"}
)
