package e2e

import (
	"context"
	"fmt"
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

var releaseRGD = graphs.RGD("engrelease", "EngRelease", "spec: {}",
	graphs.ConfigMap("a", "${schema.metadata.name}-a", "k: v"),
	graphs.ConfigMap("b", "${a.metadata.name}-b", "from: ${a.metadata.name}"))

// waitHeld polls the engine's counts until cond holds.
func (run *engRun) waitHeld(timeout time.Duration, what string, cond func(engine.Held) bool) engine.Held {
	run.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		h := run.e.Held()
		if cond(h) {
			return h
		}
		if time.Now().After(deadline) {
			run.t.Fatalf("timed out after %s waiting for %s: holding %+v", timeout, what, h)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestDeletedInstancesAndStoppedGraphReleased: the object cache and the
// state store hold nothing more of deleted instances (their children and
// the instances themselves) and of a graph that stopped (its RGD deleted,
// its instances left in the cluster) than before they existed. Only the
// gone set keeps the deleted objects' UIDs, for objcache.GoneTTL.
func TestDeletedInstancesAndStoppedGraphReleased(t *testing.T) {
	r := newEngRig(t)
	r.env.InstallCRDs(t, krocontroller.CRDs(t)...)
	r.clusterRGD(releaseRGD)
	run := r.start(func(o *engine.Options) { o.WatchClusterRGDs = true })
	gvr := run.graphServed("engrelease")
	resource := gvr.GroupResource().String()
	base := run.e.Held()
	t.Logf("baseline: %+v", base)

	const n = 4
	create := func(prefix string) {
		for i := range n {
			r.createInstance(gvr, "EngRelease", fmt.Sprintf("%s%d", prefix, i), nil)
		}
		run.allInState(resource, n, reconciler.InstanceStateActive, 2*time.Minute)
	}
	// Each instance's two children are remembered (the instances
	// themselves only until their informer catches up with the status).
	create("del")
	full := run.waitHeld(time.Minute, "the children cached", func(h engine.Held) bool { return h.CachedObjects >= base.CachedObjects+2*n })
	t.Logf("%d ACTIVE: %+v", n, full)

	inst := r.dyn.Resource(gvr).Namespace(r.ns)
	for i := range n {
		if err := inst.Delete(context.Background(), fmt.Sprintf("del%d", i), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	run.waitFor(2*time.Minute, "the deleted instances gone from the state", func(s *state.Snapshot) bool { return len(s.Instances) == base.Instances })
	h := run.waitHeld(time.Minute, "the object cache back to its baseline", func(h engine.Held) bool { return h.CachedObjects == base.CachedObjects })
	// Each instance and its two children were seen deleted.
	if h.GoneUIDs > base.GoneUIDs+3*n {
		t.Errorf("gone set %d, want at most %d (the deleted objects)", h.GoneUIDs, base.GoneUIDs+3*n)
	}
	t.Logf("after the deletions: %+v", h)

	// A stopped graph: nothing deletes its instances or children, so no
	// watch event releases what the engine held for them.
	create("keep")
	run.waitHeld(time.Minute, "the children cached", func(h engine.Held) bool { return h.CachedObjects >= base.CachedObjects+2*n })
	if err := r.dyn.Resource(graph.GroupVersionResource).Delete(context.Background(), "engrelease", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	run.waitFor(2*time.Minute, "the graph stopped", func(s *state.Snapshot) bool {
		for _, g := range s.Graphs {
			if g.Name == "engrelease" && g.Served {
				return false
			}
		}
		return true
	})
	h = run.waitHeld(time.Minute, "the stopped graph's objects released", func(h engine.Held) bool {
		return h.CachedObjects == base.CachedObjects && h.Instances == base.Instances
	})
	t.Logf("after the graph stopped: %+v", h)
}
