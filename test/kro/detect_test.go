package kro

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/test/engrun"
	"github.com/kroscope/kroscope/test/graphs"
)

// TestKroDetectedNoWrite is "never fight kro": kro's real controller
// reconciles a graph's instances, and kroscope started in its default
// (reconcile) mode, lease and all, on the same cluster must see that kro is
// active and only observe: it shows the instances as kro left them, stays in
// observe mode, and sends no write, not even for an instance created while
// both run.
func TestKroDetectedNoWrite(t *testing.T) {
	r := newKroRig(t)
	rgd := r.storeGraphYAML(graphs.Chain("krodetect", "KroDetect"))
	live := r.waitGraphs([]string{rgd.GetName()}, nil)[rgd.GetName()]
	crd := r.instanceCRD(live)
	gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: crd.Spec.Versions[0].Name, Resource: crd.Spec.Names.Plural}
	res := gvr.Resource + "." + gvr.Group
	for _, n := range []string{"one", "two"} {
		r.createInstance(gvr, "KroDetect", n)
	}
	r.waitKroActive(gvr, "one", "two")

	eng := r.startEngine(func(o *engine.Options) {
		o.WatchClusterRGDs = true
		o.DisableLease = false // as `kroscope` runs by default
		o.LeaseNamespace = r.ns
		o.Identity = "kroscope-detect"
	})
	eng.Until(time.Minute, "kroscope to serve the cluster graph", func(s *state.Snapshot) (bool, string) {
		g := graphNamed(s, rgd.GetName())
		if g != nil && g.Err != "" {
			t.Fatalf("kroscope rejected the cluster graph %s (Active in kro): %s", g.Name, g.Err)
		}
		return g != nil && g.Served, engrun.Describe(s)
	})
	// An instance created while both run: kro takes it; kroscope must not.
	r.createInstance(gvr, "KroDetect", "three")
	r.waitKroActive(gvr, "three")
	snap := eng.Until(time.Minute, "kroscope to show every instance as kro left it", func(s *state.Snapshot) (bool, string) {
		for _, n := range []string{"one", "two", "three"} {
			in := s.Instance(state.InstanceKey{Resource: res, Namespace: r.ns, Name: n})
			if in == nil || in.State != reconciler.InstanceStateActive || in.Reconciles < 1 {
				return false, engrun.Describe(s) + fmt.Sprintf("writes so far: %d %v\n", eng.Writes(), eng.FirstWrites())
			}
		}
		return true, ""
	})
	if snap.Mode.Reconciling {
		t.Errorf("kroscope reconciles beside an active kro: mode %+v", snap.Mode)
	}
	if n := eng.Writes(); n != 0 {
		t.Errorf("kroscope sent %d write requests while kro was active: %v", n, eng.FirstWrites())
	}
	t.Logf("kroscope beside kro: mode %+v, %d requests, %d writes", snap.Mode, eng.Requests(), eng.Writes())
}

// storeGraphYAML is storeGraph for a graph given as YAML.
func (r *kroRig) storeGraphYAML(doc string) *unstructured.Unstructured {
	r.t.Helper()
	obj := map[string]any{}
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		r.t.Fatal(err)
	}
	out, err := r.dyn.Resource(graph.GroupVersionResource).Create(ctxT(r.t), &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
	if err != nil {
		r.t.Fatalf("storing graph through kro's CRD: %v", err)
	}
	name := out.GetName()
	r.t.Cleanup(func() { r.deleteAndWait(graph.GroupVersionResource, "", name, "") })
	return out
}

// createInstance creates an instance with an empty spec in the rig's
// namespace; it is deleted at cleanup, while kro still runs.
func (r *kroRig) createInstance(gvr schema.GroupVersionResource, kind, name string) {
	r.t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvr.GroupVersion().String(), "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": r.ns},
		"spec":     map[string]any{},
	}}
	if _, err := r.dyn.Resource(gvr).Namespace(r.ns).Create(ctxT(r.t), u, metav1.CreateOptions{}); err != nil {
		r.t.Fatalf("creating %s %s: %v", kind, name, err)
	}
	r.t.Cleanup(func() { r.deleteAndWait(gvr, r.ns, name, r.ns) })
}

// waitKroActive waits until kro wrote ACTIVE on the named instances.
func (r *kroRig) waitKroActive(gvr schema.GroupVersionResource, names ...string) {
	r.t.Helper()
	r.poll(2*time.Minute, "kro to report the instances ACTIVE", func() (bool, string) {
		var b strings.Builder
		ok := true
		for _, n := range names {
			u := r.get(gvr, r.ns, n)
			st := ""
			if u != nil {
				st, _, _ = unstructured.NestedString(u.Object, "status", "state")
			}
			if st != reconciler.InstanceStateActive {
				ok = false
				fmt.Fprintf(&b, "  %s: %q\n", n, st)
			}
		}
		return ok, b.String()
	})
}
