package watch

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"

	"github.com/kroscope/kroscope/engine/slim"
)

// Event is one change of a watched object, as the metadata informer saw it.
type Event struct {
	Type      string // "add", "update" or "delete"
	Spec      Spec   // the watch that saw it
	Namespace string
	Name      string
	// UID is the object's; a deletion's UID tells a late record of the dead
	// object from a new object of the same name.
	UID    types.UID
	Labels map[string]string
	// OldLabels are the labels before an update (nil otherwise), so an object
	// leaving a selector is still routed.
	OldLabels map[string]string
	// ResourceVersion is the object's version the event shows.
	ResourceVersion string
}

// Spec says what a shared informer watches. Equal specs share one informer.
type Spec struct {
	GVR schema.GroupVersionResource
	// Namespace limits the watch; "" means all namespaces.
	Namespace     string
	LabelSelector string
	FieldSelector string
	// ExternalSelector marks LabelSelector as an external collection's
	// selector (objects a graph reads), not the child label.
	ExternalSelector bool
}

// Name is the display name of the watch, e.g. "configmaps (children)".
func (s Spec) Name() string {
	n := s.GVR.Resource
	if s.GVR.Group != "" {
		n += "." + s.GVR.Group
	}
	switch {
	case s.ExternalSelector:
		where := s.LabelSelector
		if where == "" {
			where = "everything"
		}
		if s.Namespace != "" {
			where = s.Namespace + " " + where
		}
		return fmt.Sprintf("%s (external selector %s)", n, where)
	case s.FieldSelector != "":
		where := s.FieldSelector
		if s.Namespace != "" {
			where = s.Namespace + " " + where
		}
		return fmt.Sprintf("%s (external %s)", n, where)
	case s.LabelSelector != "":
		return n + " (children)"
	}
	return n + " (metadata)"
}

// Manager shares metadata-only informers between users.
type Manager struct {
	ctx     context.Context
	client  metadata.Interface
	group   *Group
	handler func(Event)
	check   time.Duration

	mu      sync.Mutex
	entries map[Spec]*entry
}

type entry struct {
	refs   int
	cancel context.CancelFunc
	inf    cache.SharedIndexInformer
	mon    *Monitor
}

// NewManager returns a manager whose informers live until ctx is done and
// pass every event to handler.
func NewManager(ctx context.Context, client metadata.Interface, group *Group, handler func(Event)) *Manager {
	return &Manager{ctx: ctx, client: client, group: group, handler: handler, check: time.Second, entries: map[Spec]*entry{}}
}

// Acquire starts (or shares) the informer for s and returns the function
// that releases it; the last release stops the informer.
func (m *Manager) Acquire(s Spec) (release func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[s]
	if !ok {
		e = m.start(s)
		m.entries[s] = e
	}
	e.refs++
	var once sync.Once
	return func() { once.Do(func() { m.release(s) }) }
}

func (m *Manager) release(s Spec) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[s]
	if !ok {
		return
	}
	e.refs--
	if e.refs <= 0 {
		e.cancel()
		delete(m.entries, s)
	}
}

// Running returns the specs being watched (for tests and diagnostics).
func (m *Manager) Running() []Spec {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Spec, 0, len(m.entries))
	for s := range m.entries {
		out = append(out, s)
	}
	return out
}

// WaitForSync waits until the informers of specs have synced or are
// forbidden (a watch this user may not list cannot sync; it is reported
// and retried, and must not hold its graph back), or ctx ends.
func (m *Manager) WaitForSync(ctx context.Context, specs ...Spec) bool {
	var mons []*Monitor
	m.mu.Lock()
	for _, s := range specs {
		if e, ok := m.entries[s]; ok {
			mons = append(mons, e.mon)
		}
	}
	m.mu.Unlock()
	for _, mon := range mons {
		if !mon.WaitForSync(ctx) {
			return false
		}
	}
	return true
}

func (m *Manager) start(s Spec) *entry {
	inf := metadatainformer.NewFilteredMetadataInformer(m.client, s.GVR, s.Namespace, 0, cache.Indexers{}, func(o *metav1.ListOptions) {
		o.LabelSelector = s.LabelSelector
		o.FieldSelector = s.FieldSelector
	}).Informer()
	// Nothing reads a watched object's managedFields: they are dropped
	// before the informer stores it (most of a small object's metadata).
	_ = inf.SetTransform(slim.Transform)
	mon := m.group.MonitoredScope(inf, s.Name(), resourceOf(s.GVR), s.Namespace)
	emit := func(typ string, obj any, old map[string]string) {
		mon.Event(typ)
		acc := MetaOf(obj)
		if acc == nil {
			return
		}
		m.handler(Event{Type: typ, Spec: s, Namespace: acc.GetNamespace(), Name: acc.GetName(), UID: acc.GetUID(), Labels: acc.GetLabels(), OldLabels: old, ResourceVersion: acc.GetResourceVersion()})
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { emit("add", obj, nil) },
		UpdateFunc: func(oldObj, obj any) {
			var old map[string]string
			if o := MetaOf(oldObj); o != nil {
				old = o.GetLabels()
			}
			emit("update", obj, old)
		},
		DeleteFunc: func(obj any) { emit("delete", obj, nil) },
	})
	ctx, cancel := context.WithCancel(m.ctx)
	go mon.Run(ctx, m.check)
	return &entry{cancel: cancel, inf: inf, mon: mon}
}

func resourceOf(gvr schema.GroupVersionResource) string {
	if gvr.Group == "" {
		return gvr.Resource
	}
	return gvr.Resource + "." + gvr.Group
}

// MetaOf returns the object's metadata, unwrapping a tombstone.
func MetaOf(obj any) metav1.Object {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	o, ok := obj.(metav1.Object)
	if !ok {
		return nil
	}
	return o
}

// Lookup returns what the informer of s holds for namespace/name: exists
// reports whether it holds the object; ok is false when no informer of s is
// running or it has not synced yet (it cannot tell).
func (m *Manager) Lookup(s Spec, namespace, name string) (obj metav1.Object, exists, ok bool) {
	m.mu.Lock()
	e := m.entries[s]
	m.mu.Unlock()
	if e == nil || !e.inf.HasSynced() {
		return nil, false, false
	}
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	item, exists, err := e.inf.GetIndexer().GetByKey(key)
	if err != nil {
		return nil, false, false
	}
	if !exists {
		return nil, false, true
	}
	if obj = MetaOf(item); obj == nil {
		return nil, false, false
	}
	return obj, true, true
}
