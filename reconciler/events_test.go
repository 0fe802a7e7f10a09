package reconciler

import (
	"runtime"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/graph"
)

// TestControllerCloseReleasesTheEventBroadcaster: a graph restarted 100
// times (a controller built, its recorder used, then closed) leaves the
// goroutine count and the heap where they started.
func TestControllerCloseReleasesTheEventBroadcaster(t *testing.T) {
	set := client.NewSetFromClients(client.Clients{Kubernetes: kubefake.NewSimpleClientset()})
	gvr := schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: "tests"}
	restart := func() {
		c := NewController(logr.Discard(), ReconcileConfig{}, gvr, &graph.Graph{}, set, nil, nil)
		if _, _, _, rec := c.options(); rec == nil {
			t.Fatal("no recorder built")
		}
		c.Close()
	}
	restart() // warm up: lazily started client-go and test machinery
	settle := func() (int, uint64) {
		var ms runtime.MemStats
		for range 50 {
			runtime.GC()
			time.Sleep(10 * time.Millisecond)
		}
		runtime.ReadMemStats(&ms)
		return runtime.NumGoroutine(), ms.HeapAlloc
	}
	g0, h0 := settle()
	for range 100 {
		restart()
	}
	var g1 int
	var h1 uint64
	for range 20 { // broadcaster goroutines end shortly after Shutdown
		if g1, h1 = settle(); g1 <= g0 {
			break
		}
	}
	if g1 > g0 {
		t.Errorf("goroutines %d after 100 restarts, %d before", g1, g0)
	}
	if h1 > h0+4<<20 {
		t.Errorf("heap %d KiB after 100 restarts, %d KiB before", h1>>10, h0>>10)
	}
}
