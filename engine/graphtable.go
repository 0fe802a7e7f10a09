package engine

import (
	"fmt"
	"iter"
	"maps"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kroscope/kroscope/engine/state"
)

// graphTable is what is served, under one lock: the graphs' runs by name
// and their instance kinds. It decides which graph serves a kind (one at
// a time); the other groups look graphs up here.
type graphTable struct {
	mu     sync.RWMutex
	served map[schema.GroupVersionResource]*served
	byRes  map[string]*served // "plural.group" → served
	runs   map[string]*graphRun
	// serving numbers each graph's served definitions (state.Graph.Serving).
	serving map[string]int64
}

func newGraphTable() *graphTable {
	return &graphTable{served: map[schema.GroupVersionResource]*served{}, byRes: map[string]*served{}, runs: map[string]*graphRun{}, serving: map[string]int64{}}
}

// nextServing numbers a definition of graph name about to be served.
func (t *graphTable) nextServing(name string) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.serving[name]++
	return t.serving[name]
}

// of returns the graph serving gvr's instances, or nil.
func (t *graphTable) of(gvr schema.GroupVersionResource) *served {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.served[gvr]
}

// started returns the graph serving resource ("plural.group") once its
// informer is started, or nil.
func (t *graphTable) started(resource string) *served {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if s := t.byRes[resource]; s != nil && s.inf != nil {
		return s
	}
	return nil
}

// servedFor returns the graph serving key's kind, or an error the UI can show.
func (t *graphTable) servedFor(key state.InstanceKey) (*served, error) {
	s := t.started(key.Resource)
	if s == nil {
		return nil, fmt.Errorf("no graph serves %s", key.Resource)
	}
	return s, nil
}

// all returns the graphs served now, copied under the lock so that
// callers can make API calls without holding it.
func (t *graphTable) all() []*served {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return slices.Collect(maps.Values(t.served))
}

// each yields the graphs served, under the lock (the hot path of
// routing a watch event copies nothing).
func (t *graphTable) each() iter.Seq[*served] {
	return func(yield func(*served) bool) {
		t.mu.RLock()
		defer t.mu.RUnlock()
		for _, s := range t.served {
			if !yield(s) {
				return
			}
		}
	}
}

// alive takes and releases the lock: it blocks while a deadlock holds it
// (the heartbeat's probe, see health.heartbeat).
func (t *graphTable) alive() {
	t.mu.RLock()
	defer t.mu.RUnlock()
}

// allRuns returns the graphs' runs now.
func (t *graphTable) allRuns() []*graphRun {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return slices.Collect(maps.Values(t.runs))
}

// takeRun removes and returns graph name's run (nil when none).
func (t *graphTable) takeRun(name string) *graphRun {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.runs[name]
	delete(t.runs, name)
	return r
}

// putRun records r as its graph's run.
func (t *graphTable) putRun(r *graphRun) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.runs[r.name] = r
}

// takeRuns removes and returns every run (on shutdown).
func (t *graphTable) takeRuns() map[string]*graphRun {
	t.mu.Lock()
	defer t.mu.Unlock()
	runs := t.runs
	t.runs = map[string]*graphRun{}
	return runs
}

// reserve claims s's kind; when another graph serves it, that one is
// returned and nothing is claimed.
func (t *graphTable) reserve(s *served) (other *served) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if other, ok := t.byRes[s.resource]; ok {
		return other
	}
	t.byRes[s.resource] = s
	return nil
}

// serve makes s, its informer inf started, the graph that serves its kind.
func (t *graphTable) serve(s *served, inf cache.SharedIndexInformer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s.inf = inf
	t.served[s.gvr] = s
}

// unserve: no worker picks s's instances any more.
func (t *graphTable) unserve(s *served) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.served[s.gvr] == s {
		delete(t.served, s.gvr)
	}
}

// release gives up s's kind.
func (t *graphTable) release(s *served) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byRes[s.resource] == s {
		delete(t.byRes, s.resource)
	}
	if t.served[s.gvr] == s {
		delete(t.served, s.gvr)
	}
}
