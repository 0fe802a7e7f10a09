package watch

import (
	"context"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	watchapi "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/kroscope/kroscope/engine/state"
)

// healthLog records what a Monitor reports.
type healthLog struct {
	mu   sync.Mutex
	last map[string]state.Watch
}

func (h *healthLog) SetWatch(w state.Watch) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last[w.Name] = w
}

func (h *healthLog) RemoveWatch(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.last, name)
}

func (h *healthLog) get(name string) state.Watch {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last[name]
}

// emptyInformer lists nothing and watches forever. Its watch starts with
// the bookmark that ends a streamed list (client-go lists by watching).
func emptyInformer() cache.SharedIndexInformer {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watchapi.Interface, error) {
			w := watchapi.NewFakeWithChanSize(1, false)
			w.Action(watchapi.Bookmark, &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "1",
				Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}})
			return w, nil
		},
	}
	return cache.NewSharedIndexInformer(lw, &metav1.PartialObjectMetadata{}, 0, cache.Indexers{})
}

// Once WaitForSync returns, the health view already says synced: /readyz
// asked right after a graph is served (it waits on its watches) must not
// find them unsynced until the monitor's next check, a second later.
func TestWaitForSyncReportsTheSyncAtOnce(t *testing.T) {
	h := &healthLog{last: map[string]state.Watch{}}
	mon := NewGroup(h).Monitored(emptyInformer(), "configmaps")
	if w := h.get("configmaps"); w.Synced {
		t.Fatalf("before the informer runs: %+v, want not synced", w)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go mon.Run(ctx, time.Hour) // no periodic check during the test
	wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
	defer wcancel()
	if !mon.WaitForSync(wctx) {
		t.Fatalf("the informer did not sync: %+v", h.get("configmaps"))
	}
	if w := h.get("configmaps"); !w.Synced || !w.Healthy {
		t.Errorf("right after WaitForSync: %+v, want synced and healthy", w)
	}
}
