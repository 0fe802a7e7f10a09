package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/test/graphs"
	"github.com/kroscope/kroscope/test/krocontroller"
)

// Three graphs from files and one from the cluster are served at once; an
// invalid file graph is reported and the others are unaffected; removing the
// cluster graph stops its controller.
func TestEngineServesFileAndClusterGraphs(t *testing.T) {
	r := newEngRig(t)
	// kro's own CRD: graphs come back as a cluster running kro stores them
	// (defaults such as spec.schema.scope filled in, unknown fields pruned).
	r.env.InstallCRDs(t, krocontroller.CRDs(t)...)
	kinds := []string{"EngSrcOne", "EngSrcTwo", "EngSrcThree"}
	var paths []string
	for _, k := range kinds {
		paths = append(paths, r.writeFile(strings.ToLower(k)+".yaml", graphs.Chain(strings.ToLower(k), k)))
	}
	// Invalid: b reads a resource that does not exist.
	bad := strings.Replace(graphs.Chain("engsrcbad", "EngSrcBad"), "${a.metadata.name}-b", "${nosuch.metadata.name}-b", 1)
	paths = append(paths, r.writeFile("bad.yaml", bad))

	clusterRGD := r.applyYAML(graph.GroupVersionResource, "", graphs.Chain("engsrccluster", "EngSrcCluster"))
	t.Cleanup(func() {
		_ = r.dyn.Resource(graph.GroupVersionResource).Delete(context.Background(), clusterRGD.GetName(), metav1.DeleteOptions{})
	})

	run := r.start(func(o *engine.Options) {
		o.RGDPaths = paths
		o.WatchClusterRGDs = true
	})
	gvrs := map[string]string{}
	for _, k := range append(kinds, "EngSrcCluster") {
		gvr := run.graphServed(strings.ToLower(k))
		r.createInstance(gvr, k, strings.ToLower(k), nil)
		gvrs[k] = gvr.Resource + "." + gvr.Group
	}
	snap := run.waitFor(2*time.Minute, "every instance ACTIVE", func(s *state.Snapshot) bool {
		n := 0
		for _, in := range s.Instances {
			if in.State == reconciler.InstanceStateActive {
				n++
			}
		}
		return n == 4
	})
	var badGraph *state.Graph
	for i, g := range snap.Graphs {
		if g.Name == "engsrcbad" {
			badGraph = &snap.Graphs[i]
		}
	}
	if badGraph == nil || badGraph.Err == "" || badGraph.Served {
		t.Fatalf("invalid graph not reported: %+v", badGraph)
	}
	if !strings.Contains(badGraph.Err, "nosuch") {
		t.Errorf("invalid graph error does not name the problem: %s", badGraph.Err)
	}
	t.Logf("invalid graph reported as: %s", badGraph.Err)

	// Removing the cluster graph stops its controller.
	if err := r.dyn.Resource(graph.GroupVersionResource).Delete(context.Background(), clusterRGD.GetName(), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	run.waitFor(time.Minute, "the cluster graph and its instances gone from the state", func(s *state.Snapshot) bool {
		for _, g := range s.Graphs {
			if g.Name == "engsrccluster" {
				return false
			}
		}
		for _, in := range s.Instances {
			if in.Key.Resource == gvrs["EngSrcCluster"] {
				return false
			}
		}
		return true
	})
	// A new instance of the removed kind is no longer reconciled (no
	// finalizer appears); the file graphs still are.
	clusterGVR := run.graphServedGVRFromResource(gvrs["EngSrcCluster"])
	r.createInstance(clusterGVR, "EngSrcCluster", "after-cluster", nil)
	oneGVR := run.graphServed("engsrcone")
	r.createInstance(oneGVR, "EngSrcOne", "after-one", nil)
	run.waitFor(time.Minute, "the new file-graph instance ACTIVE", func(s *state.Snapshot) bool {
		in := s.Instance(state.InstanceKey{Resource: gvrs["EngSrcOne"], Namespace: r.ns, Name: "after-one"})
		return in != nil && in.State == reconciler.InstanceStateActive
	})
	got, err := r.dyn.Resource(clusterGVR).Namespace(r.ns).Get(context.Background(), "after-cluster", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.GetFinalizers()) != 0 {
		t.Errorf("instance of the removed graph was reconciled: finalizers %v", got.GetFinalizers())
	}
}

// graphServedGVRFromResource turns "plural.group" back into a GVR.
func (run *engRun) graphServedGVRFromResource(res string) (gvr schema.GroupVersionResource) {
	plural, group, _ := strings.Cut(res, ".")
	return schema.GroupVersionResource{Group: group, Version: graph.Version, Resource: plural}
}
