package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/test/graphs"
	"github.com/kroscope/kroscope/test/krocontroller"
)

// rolloutOf is the rollout of graph name in s, and whether it is there.
func rolloutOf(s *state.Snapshot, name string) (state.Rollout, bool) {
	for _, g := range s.Graphs {
		if g.Name == name {
			return g.Status.Rollout, true
		}
	}
	return state.Rollout{}, false
}

// The plan view's apply: Engine.ApplyGraphs writes the edited definition
// to the cluster as kroscope's field manager, the engine serves it and
// the rollout's progress reaches N/N with the change made on every
// instance. An --observe engine, and a graph this kroscope serves from
// --rgd, are refused without a write.
func TestEngineApplyGraphRollout(t *testing.T) {
	r := newEngRig(t)
	r.env.InstallCRDs(t, krocontroller.CRDs(t)...)
	const name, kind, n = "engapply", "EngApply", 3
	r.applyYAML(graph.GroupVersionResource, "", graphs.Chain(name, kind))
	t.Cleanup(func() {
		_ = r.dyn.Resource(graph.GroupVersionResource).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	edited := strings.Replace(graphs.Chain(name, kind), "        from: ${b.metadata.name}\n", "        from: ${b.metadata.name}\n        rolled: v2\n", 1)
	path := r.writeFile("edited.yaml", edited)

	run := r.start(func(o *engine.Options) { o.WatchClusterRGDs = true })
	gvr := run.graphServed(name)
	res := gvr.Resource + "." + gvr.Group
	for i := range n {
		r.createInstance(gvr, kind, fmt.Sprintf("app-%d", i), nil)
	}
	run.allInState(res, n, reconciler.InstanceStateActive, 2*time.Minute)
	if ro, _ := rolloutOf(run.e.Snapshot(), name); ro.Serving != 1 || ro.Running() {
		t.Fatalf("before the change: rollout %+v, want the first definition and no rollout", ro)
	}

	names, err := run.e.ApplyGraphs(context.Background(), path)
	if err != nil || len(names) != 1 || names[0] != name {
		t.Fatalf("ApplyGraphs = %v, %v", names, err)
	}
	run.Until(2*time.Minute, "the rollout at 3/3", func(s *state.Snapshot) (bool, string) {
		ro, _ := rolloutOf(s, name)
		return ro.Serving == 2 && ro.Updated == n && ro.Total == n && ro.Failed == 0 && !ro.Running(), ro.Line()
	})
	for i := range n {
		cm, err := r.env.Kubernetes().CoreV1().ConfigMaps(r.ns).Get(context.Background(), fmt.Sprintf("app-%d-a-b-c", i), metav1.GetOptions{})
		if err != nil || cm.Data["rolled"] != "v2" {
			t.Errorf("app-%d's ConfigMap c after the rollout: %v, %v", i, cm.Data, err)
		}
	}
	rgd, err := r.dyn.Resource(graph.GroupVersionResource).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The user's apply, under the user's manager: never kroscope's own,
	// which would set kro's earlier writes on the graph aside.
	applied := ""
	for _, mf := range rgd.GetManagedFields() {
		if mf.Operation == metav1.ManagedFieldsOperationApply && mf.Subresource == "" {
			applied += mf.Manager + " "
		}
	}
	if applied != engine.UserFieldManager+" " {
		t.Errorf("the RGD's spec was applied by %q, want %s alone", applied, engine.UserFieldManager)
	}
	if err := run.stop(); err != nil {
		t.Fatal(err)
	}

	// Observing (the CRD is there now): refused before anything is written.
	obs := r.start(func(o *engine.Options) { o.WatchClusterRGDs, o.Observe = true, true })
	obs.graphServed(name)
	if err := obs.e.ApplyGraphRefused(path); err == nil || !strings.Contains(err.Error(), "--observe") {
		t.Errorf("observing: ApplyGraphRefused = %v, want the --observe refusal", err)
	}
	if _, err := obs.e.ApplyGraphs(context.Background(), path); err == nil || !strings.Contains(err.Error(), "--observe") {
		t.Errorf("observing: ApplyGraphs = %v, want the --observe refusal", err)
	}
	if w := obs.Writes(); w != 0 {
		t.Errorf("observing: %d writes (%v)", w, obs.WritesBy())
	}
	if err := obs.stop(); err != nil {
		t.Fatal(err)
	}

	// A graph served from --rgd: applying it to the cluster would not
	// change what is served, so it is refused.
	files := r.start(func(o *engine.Options) { o.RGDPaths = []string{path} })
	files.graphServed(name)
	if _, err := files.e.ApplyGraphs(context.Background(), path); err == nil || !strings.Contains(err.Error(), "--rgd") {
		t.Errorf("a --rgd graph: ApplyGraphs = %v, want the --rgd refusal", err)
	}
	if err := files.e.ApplyGraphRefused(); err == nil {
		t.Error("applying the served --rgd files (no FILE) was not refused")
	}
}
