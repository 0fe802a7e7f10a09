package engine

import (
	"context"
	"sync"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kroscope/kroscope/engine/objcache"
	"github.com/kroscope/kroscope/engine/packed"
	"github.com/kroscope/kroscope/engine/slim"
	"github.com/kroscope/kroscope/engine/watch"
	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
)

// reader serves the reconcilers' reads from the engine's watches
// (reconciler.Reader): instances from their full-object informers, children
// from the objects the API server last returned for them, for as long as
// the children's metadata-only informers show those are current. A
// converging instance then costs writes only, and a reconcile waits on
// fewer round trips.
type reader struct {
	cache *objcache.Cache
	// seeded are the child watches whose objects were listed into the
	// cache once (seedChildren).
	seeded sync.Map // watch.Spec -> struct{}

	table     *graphTable // the instance kinds' informers
	informers *informers  // the children's
	set       *client.Set // seeds the cache
	log       logr.Logger
	namespace string // Options.Namespace
}

func newReader(table *graphTable, set *client.Set, log logr.Logger, inf *informers, namespace string) *reader {
	return &reader{cache: objcache.New(), table: table, set: set, log: log, informers: inf, namespace: namespace}
}

func key(gvr schema.GroupVersionResource, namespace, name string) objcache.Key {
	return objcache.Key{GVR: gvr, Namespace: namespace, Name: name}
}

// Instance answers from the kind's informer, or from the object kroscope
// last wrote while the informer has not caught up with it.
func (r *reader) Instance(gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, bool) {
	s := r.table.of(gvr)
	if s == nil || s.inf == nil || !s.inf.HasSynced() {
		return nil, false
	}
	k := namespace + "/" + name
	if namespace == "" {
		k = name
	}
	item, exists, err := s.inf.GetIndexer().GetByKey(k)
	if err != nil {
		return nil, false
	}
	m := watch.MetaOf(item)
	if exists && m == nil {
		return nil, false
	}
	rv := ""
	if m != nil {
		rv = m.GetResourceVersion()
	}
	ck := key(gvr, namespace, name)
	known := r.cache.Has(ck)
	if obj, ok := r.cache.Get(ck, exists, rv); ok {
		return obj, true
	}
	if known || !exists {
		// The informer shows a version kroscope did not see coming (it may
		// even be older than one kroscope read), or no object: ask.
		return nil, false
	}
	return instanceObject(item)
}

// Child answers from the object last returned for it, while the children's
// informer shows that version (or one it replaced).
func (r *reader) Child(gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, bool) {
	meta, exists, ok := r.childWatch(gvr, namespace, name)
	if !ok {
		return nil, false
	}
	rv := ""
	if exists {
		rv = meta.GetResourceVersion()
	}
	return r.cache.Get(key(gvr, namespace, name), exists, rv)
}

// Unseen: the informer covering the child has synced and holds nothing at
// its name.
func (r *reader) Unseen(gvr schema.GroupVersionResource, namespace, name string) bool {
	_, exists, ok := r.childWatch(gvr, namespace, name)
	return ok && !exists
}

// seedPage is how many objects one page of a seeding list holds.
const seedPage = 500

// seedChildren lists, once per process, the full objects a child watch
// covers (kroscope's labelled objects of its kind, in its namespace or
// every one) into the cache, where nothing is known of them yet. The
// watches are metadata-only: without this, a process that just started
// reads each child of each instance with a GET before it can judge it
// current (6,000 GETs for 2,000 three-child instances); with it, a page
// per 500 children. A list that is refused or fails leaves the reads to
// GETs, as before.
func (r *reader) seedChildren(ctx context.Context, sp watch.Spec) {
	if _, done := r.seeded.LoadOrStore(sp, struct{}{}); done {
		return
	}
	ri := r.set.Dynamic().Resource(sp.GVR).Namespace(sp.Namespace)
	opts := metav1.ListOptions{LabelSelector: sp.LabelSelector, Limit: seedPage}
	for {
		list, err := ri.List(ctx, opts)
		if err != nil {
			r.log.V(1).Info("could not list children to seed the cache; reading them one by one", "resource", sp.GVR.String(), "error", err.Error())
			return
		}
		for i := range list.Items {
			u := &list.Items[i]
			r.cache.Seed(key(sp.GVR, u.GetNamespace(), u.GetName()), u)
		}
		if opts.Continue = list.GetContinue(); opts.Continue == "" {
			return
		}
	}
}

// childWatch looks the child up in the informer that covers it: the
// all-namespaces one, or the one of the engine's namespace.
func (r *reader) childWatch(gvr schema.GroupVersionResource, namespace, name string) (meta interface{ GetResourceVersion() string }, exists, ok bool) {
	spec := watch.Spec{GVR: gvr, LabelSelector: metadata.InstanceIDLabel}
	if m, ex, ok := r.informers.lookup(spec, namespace, name); ok {
		return m, ex, true
	}
	if ns := r.namespace; ns != "" && ns == namespace {
		spec.Namespace = ns
		if m, ex, ok := r.informers.lookup(spec, namespace, name); ok {
			return m, ex, true
		}
	}
	return nil, false, false
}

func (r *reader) Read(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) {
	r.cache.Read(key(gvr, obj.GetNamespace(), obj.GetName()), obj)
}

func (r *reader) Wrote(gvr schema.GroupVersionResource, obj *unstructured.Unstructured, replaces string) {
	k := key(gvr, obj.GetNamespace(), obj.GetName())
	r.cache.Wrote(k, obj, replaces)
	// An instance's informer that already shows this version (its event
	// came before the write's response) serves it: the instance handler's
	// CaughtUp has run already, so drop the copy here.
	if rv, ok := r.instanceVersion(gvr, obj.GetNamespace(), obj.GetName()); ok && rv == obj.GetResourceVersion() {
		r.cache.CaughtUp(k, rv)
	}
}

// instanceVersion is the resourceVersion the instance informer of gvr
// holds for the object; false when gvr is not a served instance kind or
// the informer does not hold it.
func (r *reader) instanceVersion(gvr schema.GroupVersionResource, namespace, name string) (string, bool) {
	s := r.table.of(gvr)
	if s == nil || s.inf == nil {
		return "", false
	}
	k := name
	if namespace != "" {
		k = namespace + "/" + name
	}
	item, exists, err := s.inf.GetIndexer().GetByKey(k)
	if err != nil || !exists {
		return "", false
	}
	m := watch.MetaOf(item)
	if m == nil {
		return "", false
	}
	return m.GetResourceVersion(), true
}

func (r *reader) Forget(gvr schema.GroupVersionResource, namespace, name string) {
	r.cache.Forget(key(gvr, namespace, name))
}

// The cache keeps itself current from the watches: childEvents and
// instanceEvents wrap the engine's handlers, so the cache hears of each
// event before the engine wakes a reconcile for it, and no handler has to
// remember to tell it.

// childEvents feeds the cache from the child and external watches, then
// hands the event on. A deletion is recorded first: the reconcile the event
// wakes must not be served the object that is gone, nor a late record of
// it (an API call that returned before the deletion).
func (r *reader) childEvents(next func(watch.Event)) func(watch.Event) {
	return func(ev watch.Event) {
		if ev.Type == "delete" {
			r.cache.Gone(key(ev.Spec.GVR, ev.Namespace, ev.Name), ev.UID)
		}
		next(ev)
	}
}

// instanceEvents feeds the cache from an instance kind's informer, then
// hands the event on. Once the informer holds the version kroscope last
// wrote, the informer serves the instance and the written copy is dropped.
func (r *reader) instanceEvents(gvr schema.GroupVersionResource, next cache.ResourceEventHandler) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: next.OnAdd,
		UpdateFunc: func(oldObj, obj any) {
			if m := watch.MetaOf(obj); m != nil {
				r.cache.CaughtUp(key(gvr, m.GetNamespace(), m.GetName()), m.GetResourceVersion())
			}
			next.OnUpdate(oldObj, obj)
		},
		DeleteFunc: func(obj any) {
			if m := watch.MetaOf(obj); m != nil {
				r.cache.Gone(key(gvr, m.GetNamespace(), m.GetName()), m.GetUID())
			}
			next.OnDelete(obj)
		},
	}
}

// dropGraph forgets what the reconciles read and wrote of a graph that
// stopped being served: its instances (gvr) and their children (uids are
// the instances' UIDs). No watch of the graph is left to remove them.
func (r *reader) dropGraph(gvr schema.GroupVersionResource, uids map[string]bool) {
	r.cache.ForgetIf(func(k objcache.Key, obj *unstructured.Unstructured) bool {
		return k.GVR == gvr || (obj != nil && uids[obj.GetLabels()[metadata.InstanceIDLabel]])
	})
}

// Stale distrusts what is known of an object until it is read again (a
// write to it was refused as a conflict: the watch may not show the change
// yet).
func (r *reader) Stale(gvr schema.GroupVersionResource, namespace, name string) {
	r.cache.Distrust(key(gvr, namespace, name))
}

// echoes reports whether ev is a child's add event showing exactly the
// version that the API server returned to a reconcile (its create): that
// reconcile has acted on it already (a pass concludes over what it
// created, or asks for its own next pass), and waking the instance again
// would only find what it left. Updates are not echoes: a pass that
// UPDATED a child leaves the instance IN_PROGRESS and counts on the
// update's event for the pass that sees it SYNCED.
func (r *reader) echoes(ev watch.Event) bool {
	if ev.Type != "add" || ev.ResourceVersion == "" {
		return false
	}
	_, ok := r.cache.Current(key(ev.Spec.GVR, ev.Namespace, ev.Name), ev.UID, ev.ResourceVersion)
	return ok
}

// held counts the objects the cache remembers, and the deleted ones it
// remembers as gone (Engine.Held).
func (r *reader) held() (cached, gone int) { return r.cache.Len(), r.cache.GoneLen() }

// kept is the value the state store keeps for an object a reconcile
// observed (the Observation is the engine's once the reconcile is over):
// the object cache's own encoding when it holds this version, so the
// object is held once, else the observed object encoded without its
// managedFields (no screen shows them).
func (r *reader) kept(res *graph.Resource, obj *unstructured.Unstructured) packed.Object {
	if res != nil && !res.IsList() && obj.GetUID() != "" {
		if c, ok := r.cache.Current(key(res.GVR, obj.GetNamespace(), obj.GetName()), obj.GetUID(), obj.GetResourceVersion()); ok {
			return c
		}
	}
	// obj is the reconcile's; what is encoded here is the state's own.
	view := slim.WithoutManagedFields(obj.Object)
	p, err := packed.Pack(view)
	if err != nil {
		return packed.Object{}
	}
	return p
}
