package e2e

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/test/graphs"
	"github.com/kroscope/kroscope/test/krocontroller"
)

// restartRGD is a cluster graph whose one resource id changes with n, so
// that every update restarts the graph and the new run is recognisable.
func restartRGD(n int) string {
	return graphs.RGD("engleak", "EngLeak", "spec: {}", graphs.ConfigMap(fmt.Sprintf("cm%d", n%2), "${schema.metadata.name}-cm", "k: v"))
}

func goroutinesAndHeap() (int, uint64) {
	var ms runtime.MemStats
	for range 3 {
		runtime.GC()
		time.Sleep(50 * time.Millisecond)
	}
	runtime.ReadMemStats(&ms)
	return runtime.NumGoroutine(), ms.HeapAlloc
}

// TestClusterGraphRestartsReleaseResources: restarting a cluster graph
// 100 times (its RGD changed each time) leaves goroutines and heap near
// where they were: each run's informers, caches and the controller's event
// broadcaster are released when it stops.
func TestClusterGraphRestartsReleaseResources(t *testing.T) {
	if testing.Short() {
		t.Skip("100 graph restarts")
	}
	r := newEngRig(t)
	r.env.InstallCRDs(t, krocontroller.CRDs(t)...)
	r.clusterRGD(restartRGD(0))
	run := r.start(func(o *engine.Options) { o.WatchClusterRGDs = true })
	gvr := run.graphServed("engleak")
	r.createInstance(gvr, "EngLeak", "one", nil)
	run.allInState(gvr.GroupResource().String(), 1, reconciler.InstanceStateActive, time.Minute)

	rgds := r.dyn.Resource(graph.GroupVersionResource)
	restart := func(n int) {
		t.Helper()
		want := fmt.Sprintf("cm%d", n%2)
		// The engine writes the RGD's status meanwhile: retry conflicts.
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			u := r.getRGD("engleak")
			res, _, err := unstructured.NestedSlice(u.Object, "spec", "resources")
			if err != nil || len(res) != 1 {
				return fmt.Errorf("RGD resources: %v %v", res, err)
			}
			res[0].(map[string]any)["id"] = want
			if err := unstructured.SetNestedSlice(u.Object, res, "spec", "resources"); err != nil {
				return err
			}
			_, err = rgds.Update(context.Background(), u, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatalf("restart %d: %v", n, err)
		}
		run.waitFor(time.Minute, "graph restarted with "+want, func(s *state.Snapshot) bool {
			for _, g := range s.Graphs {
				if g.Name == "engleak" && g.Served && g.Template != nil && slices.Equal(g.Template.TopologicalOrder, []string{want}) {
					return true
				}
			}
			return false
		})
	}
	// Warm up: lazily built globals (schemes, caches of the REST mapper)
	// are not leaks.
	for n := 1; n <= 4; n++ {
		restart(n)
	}
	run.allInState(gvr.GroupResource().String(), 1, reconciler.InstanceStateActive, time.Minute)
	g0, h0 := goroutinesAndHeap()
	for n := 5; n < 105; n++ {
		restart(n)
	}
	run.allInState(gvr.GroupResource().String(), 1, reconciler.InstanceStateActive, time.Minute)
	time.Sleep(2 * time.Second) // stopped runs' goroutines finish
	g1, h1 := goroutinesAndHeap()
	t.Logf("100 restarts: goroutines %d -> %d, heap %.1f MiB -> %.1f MiB", g0, g1, float64(h0)/(1<<20), float64(h1)/(1<<20))
	// One leaked goroutine per restart would be +100.
	if g1 > g0+25 {
		t.Errorf("goroutines %d -> %d after 100 restarts", g0, g1)
	}
	if h1 > h0+4<<20 { // a leaked broadcaster per restart adds ~7 MiB
		t.Errorf("heap %d -> %d bytes after 100 restarts", h0, h1)
	}
}
