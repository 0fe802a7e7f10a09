package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/test/engrun"
	"github.com/kroscope/kroscope/test/graphs"
	"github.com/kroscope/kroscope/test/prereq"
)

// startRealKro runs kro's controller against the test API server with
// leader election in namespace ns, as its Helm chart does. stop kills it
// (as a crash would: kro does not release its Lease).
func startRealKro(t *testing.T, r *engRig, ns string) (stop func()) {
	t.Helper()
	return startRealKroWith(t, r, "--leader-elect", "--leader-election-namespace", ns)
}

// startRealKroWith runs kro's controller with extra flags.
func startRealKroWith(t *testing.T, r *engRig, flags ...string) (stop func()) {
	t.Helper()
	bin := prereq.KroController(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: e2e, cluster: {server: %q, certificate-authority-data: %q}}]
users: [{name: admin, user: {token: %q}}]
contexts: [{name: e2e, context: {cluster: e2e, user: admin}}]
current-context: e2e
`, r.cfg.Host, encodeB64(r.cfg.CAData), r.cfg.BearerToken)
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--kubeconfig", kubeconfig, "--metrics-bind-address", "0", "--health-probe-bind-address", "0"}, flags...)
	cmd := exec.Command(bin, args...)
	var out engrun.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			lines := strings.Split(out.String(), "\n")
			if len(lines) > 30 {
				lines = lines[len(lines)-30:]
			}
			for _, l := range lines {
				t.Logf("kro: %s", l)
			}
		}
	})
	return stop
}

// With kro's real controller reconciling a graph, kroscope makes no write
// (its own Lease included), says why (kro's Lease) and shows kro's view of
// the graph (Active, the revision kro serves). kro killed: kroscope with
// --take-over waits for kro's Lease to expire, then serves the graph and
// writes the RGD's status itself.
func TestEngineNeverFightsRealKro(t *testing.T) {
	r := newEngRig(t)
	installKroCRDsForEngine(t, r)
	withTier := strings.Replace(graphs.Chain("engrealkro", "EngRealKroApp"), "      value: string | default=one\n",
		"      value: string | default=one\n      tier: string | default=gold\n", 1)
	rgd := r.clusterRGD(withTier)
	t.Cleanup(func() { // kro's finalizer, with kro gone
		_, _ = r.dyn.Resource(graph.GroupVersionResource).Patch(context.Background(), rgd.GetName(), types.MergePatchType,
			[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
	stopKro := startRealKro(t, r, r.ns)
	kroStatus := r.waitRGD(rgd.GetName(), "kro serves the graph", 2*time.Minute, func(u *unstructured.Unstructured) bool { return rgdState(u) == "Active" })

	ownLease := "kroscope-" + r.ns
	run := r.start(func(o *engine.Options) {
		o.WatchClusterRGDs = true
		o.DisableLease = false
		o.LeaseNamespace, o.LeaseName = r.ns, ownLease
		o.KroPollInterval = 300 * time.Millisecond
	})
	snap := run.waitFor(time.Minute, "kroscope observes kro", func(s *state.Snapshot) bool {
		for _, g := range s.Graphs {
			if g.Name == "engrealkro" && g.Kro != nil && g.Kro.Revision > 0 {
				return s.Mode.Kro != ""
			}
		}
		return false
	})
	if !strings.Contains(snap.Mode.Kro, "lease "+r.ns+"/controller.kro.run held by") || snap.Mode.Reconciling {
		t.Errorf("mode %+v", snap.Mode)
	}
	for _, g := range snap.Graphs {
		if g.Name == "engrealkro" && g.Kro.Summary() != "kro: Active, serving revision 1" {
			t.Errorf("kro's view: %s", g.Kro.Summary())
		}
	}
	reqs := run.Requests()
	time.Sleep(3 * time.Second)
	if n := run.Writes(); n != 0 {
		t.Errorf("kroscope made %d writes beside a running kro", n)
	}
	if _, err := r.env.Kubernetes().CoordinationV1().Leases(r.ns).Get(context.Background(), ownLease, metav1.GetOptions{}); err == nil {
		t.Error("kroscope wrote its own Lease beside a running kro")
	}
	t.Logf("requests while observing kro for 3s: %d (all reads)", run.Requests()-reqs)
	if now := r.getRGD(rgd.GetName()); now.GetResourceVersion() != kroStatus.GetResourceVersion() && !kroWroteLast(now) {
		t.Error("someone other than kro wrote the RGD")
	}

	// kro refuses a breaking change: kroscope shows the graph blocked, and
	// still writes nothing.
	rgdPatch := func(typ types.PatchType, p string) {
		t.Helper()
		if _, err := r.dyn.Resource(graph.GroupVersionResource).Patch(context.Background(), rgd.GetName(), typ, []byte(p), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	rgdPatch(types.JSONPatchType, `[{"op":"remove","path":"/spec/schema/spec/tier"}]`)
	snap = run.waitFor(time.Minute, "kro reports the graph blocked", func(s *state.Snapshot) bool {
		for _, g := range s.Graphs {
			if g.Name == "engrealkro" && g.Kro != nil && strings.HasPrefix(g.Kro.Blocked, "KindReady: ") {
				return true
			}
		}
		return false
	})
	for _, g := range snap.Graphs {
		if g.Name == "engrealkro" {
			t.Logf("kro's view of the refused change: %s", g.Kro.Summary())
			if !strings.Contains(g.Kro.Blocked, "tier") {
				t.Errorf("blocked reason does not name the field: %s", g.Kro.Blocked)
			}
		}
	}
	if n := run.Writes(); n != 0 {
		t.Errorf("kroscope made %d writes beside a running kro", n)
	}
	// Back to the served spec; kro settles on it again.
	rgdPatch(types.JSONPatchType, `[{"op":"add","path":"/spec/schema/spec/tier","value":"string | default=gold"}]`)
	kroStatus = r.waitRGD(rgd.GetName(), "kro serves the graph again", 2*time.Minute, func(u *unstructured.Unstructured) bool {
		m := rgdCondition(u, "KindReady")
		return rgdState(u) == "Active" && m != nil && m["status"] == "True" && fmt.Sprint(m["observedGeneration"]) == fmt.Sprint(u.GetGeneration())
	})
	if err := run.stop(); err != nil {
		t.Fatal(err)
	}

	stopKro()
	take := r.start(func(o *engine.Options) {
		o.WatchClusterRGDs = true
		o.TakeOver = true
		o.KroPollInterval = 300 * time.Millisecond
	})
	take.waitFor(time.Minute, "kro's Lease expired: reconciling", func(s *state.Snapshot) bool { return s.Mode.Reconciling && s.Mode.Kro == "" })
	take.graphServed("engrealkro")
	mine := r.waitRGD(rgd.GetName(), "kroscope's status", time.Minute, func(u *unstructured.Unstructured) bool {
		m := rgdCondition(u, "GraphRevisionsResolved")
		return m != nil && strings.Contains(fmt.Sprint(m["message"]), "kroscope") && rgdState(u) == "Active"
	})
	// The same values as kro wrote for the same graph (only the
	// GraphRevisionsResolved message says who serves it).
	if a, b := statusDigest(kroStatus), statusDigest(mine); a != b {
		t.Errorf("RGD status differs from kro's\n kro:      %s\n kroscope: %s", a, b)
	}

	// Deleting the RGD: kroscope removes kro's finalizer (kro is gone), the
	// RGD goes away and the instance CRD stays, as kro leaves it.
	if len(mine.GetFinalizers()) == 0 {
		t.Fatal("kro's finalizer missing: the test proves nothing")
	}
	if err := r.dyn.Resource(graph.GroupVersionResource).Delete(context.Background(), rgd.GetName(), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := r.dyn.Resource(graph.GroupVersionResource).Get(context.Background(), rgd.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the deleted RGD is still there (finalizers %v)", r.getRGD(rgd.GetName()).GetFinalizers())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if _, err := r.dyn.Resource(crdGVRForTest).Get(context.Background(), "engrealkroapps.kro.run", metav1.GetOptions{}); err != nil {
		t.Errorf("instance CRD: %v", err)
	}
}

// statusDigest renders what `kubectl get rgd -o yaml` shows of the status,
// without times and the GraphRevisionsResolved message.
func statusDigest(u *unstructured.Unstructured) string {
	order, _, _ := unstructured.NestedStringSlice(u.Object, "status", "topologicalOrder")
	res, _, _ := unstructured.NestedSlice(u.Object, "status", "resources")
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var cs []string
	for _, c := range conds {
		m := c.(map[string]any)
		msg := m["message"]
		if m["type"] == "GraphRevisionsResolved" {
			msg = "-"
		}
		cs = append(cs, fmt.Sprintf("%v=%v/%v/%q/gen%v", m["type"], m["status"], m["reason"], msg, m["observedGeneration"]))
	}
	return fmt.Sprintf("state=%s order=%v resources=%v conditions=%v", rgdState(u), order, res, cs)
}

func kroWroteLast(u *unstructured.Unstructured) bool {
	var last metav1.ManagedFieldsEntry
	for _, f := range u.GetManagedFields() {
		if f.Time != nil && (last.Time == nil || !f.Time.Before(last.Time)) {
			last = f
		}
	}
	return last.Manager == "kro"
}

func encodeB64(b []byte) string {
	return base64Std.EncodeToString(b)
}

var base64Std = base64.StdEncoding

// kro run without leader election and without a Deployment (as a local
// binary) is seen by its writes: kroscope, started after kro reconciled a
// graph and an instance, observes and writes nothing; the reason names
// kro's field manager.
func TestEngineDetectsRealKroByItsWrites(t *testing.T) {
	r := newEngRig(t)
	installKroCRDsForEngine(t, r)
	rgd := r.clusterRGD(graphs.Chain("engrealkrowrites", "EngRealKroWritesApp"))
	t.Cleanup(func() {
		_, _ = r.dyn.Resource(graph.GroupVersionResource).Patch(context.Background(), rgd.GetName(), types.MergePatchType,
			[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
	startRealKroWith(t, r)
	r.waitRGD(rgd.GetName(), "kro serves the graph", 2*time.Minute, func(u *unstructured.Unstructured) bool { return rgdState(u) == "Active" })
	gvr := schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: "engrealkrowritesapps"}
	inst := r.createInstance(gvr, "EngRealKroWritesApp", "one", nil)
	t.Cleanup(func() {
		_, _ = r.dyn.Resource(gvr).Namespace(r.ns).Patch(context.Background(), inst.GetName(), types.MergePatchType,
			[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
	deadline := time.Now().Add(time.Minute)
	for {
		u, err := r.dyn.Resource(gvr).Namespace(r.ns).Get(context.Background(), "one", metav1.GetOptions{})
		if err == nil {
			if st, _, _ := unstructured.NestedString(u.Object, "status", "state"); st == "ACTIVE" {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("kro did not make the instance ACTIVE")
		}
		time.Sleep(200 * time.Millisecond)
	}

	run := r.start(func(o *engine.Options) { o.WatchClusterRGDs = true; o.KroPollInterval = 300 * time.Millisecond })
	snap := run.waitFor(time.Minute, "kroscope observes kro", func(s *state.Snapshot) bool { return s.Mode.Kro != "" })
	if !strings.Contains(snap.Mode.Kro, "written by field manager kro") || snap.Mode.Reconciling {
		t.Errorf("mode %+v", snap.Mode)
	}
	time.Sleep(3 * time.Second)
	if n := run.Writes(); n != 0 {
		t.Errorf("kroscope made %d writes beside a running kro", n)
	}
}
