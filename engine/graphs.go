package engine

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/kroscope/kroscope/engine/metrics"
	"github.com/kroscope/kroscope/engine/rgdstatus"
	"github.com/kroscope/kroscope/engine/source"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/engine/watch"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/confine"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/graph/crd"
	"github.com/kroscope/kroscope/reconciler/graph/graphview"
	"github.com/kroscope/kroscope/reconciler/metadata"
)

// GraphOptions are the options the engine builds every graph with, as kro
// builds them: kinds and scopes from the REST mapper, each resource typed
// from its kind's OpenAPI schema (schemas; nil leaves resources dyn), so
// that expressions are checked and the instance CRD's status schema is
// typed as kro types it; omit() only when enabled. Tests that compare with
// kro build with these too.
func GraphOptions(set *client.Set, schemas graph.SchemaResolver, celOmit bool) []graph.Option {
	opts := []graph.Option{graph.WithRESTMapper(set.RESTMapper()), graph.WithCELOmit(celOmit)}
	if schemas != nil {
		opts = append(opts, graph.WithSchemaResolver(schemas))
	}
	return opts
}

// graphTable is what is served, under one lock: the graphs' runs by name
// and their instance kinds.
type graphTable struct {
	mu     sync.RWMutex
	served map[schema.GroupVersionResource]*served
	byRes  map[string]*served // "plural.group" → served
	runs   map[string]*graphRun
	// rights are the API server's answers on kroscope's own rights, kept
	// by admission.go (CheckRights).
	rights rightsCache
	// serving numbers each graph's served definitions (state.Graph.Serving).
	serving map[string]int64
}

// nextServing numbers a definition of graph name about to be served.
func (t *graphTable) nextServing(name string) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.serving == nil {
		t.serving = map[string]int64{}
	}
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
// (the heartbeat's probe, see Engine.heartbeat).
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

// graphRun is one definition being served, from build to stop.
type graphRun struct {
	name   string
	cancel context.CancelFunc
	ready  chan struct{} // closed once served, or once it failed
	done   chan struct{} // closed once everything it started has stopped
	once   sync.Once
	// cluster: read from the cluster, so its status is written there.
	cluster bool
	// allowBreaking: the RGD carries kro.run/allow-breaking-changes: "true".
	allowBreaking bool
	// grant is what a cluster admin allowed its children (confine.Decide):
	// the graph's children-scope annotation, --allow-child-kind.
	grant confine.Grant

	mu      sync.Mutex
	outcome rgdstatus.Outcome // how far serving got, for the RGD's status
	shown   shownConditions   // the conditions the graphs screen shows (noteConditions)
	syncMu  sync.Mutex        // one status write at a time
}

func (r *graphRun) markReady() { r.once.Do(func() { close(r.ready) }) }

// served is an instance kind being reconciled.
type served struct {
	e        *Engine
	graph    *graph.Graph
	gvr      schema.GroupVersionResource
	resource string // "plural.group", the state's InstanceKey.Resource
	ctrl     *reconciler.Controller
	inf      cache.SharedIndexInformer
	children map[schema.GroupVersionResource]bool
	external []externalRef
	// selectors are the external collections watched by label selector.
	selectors []externalSelector
	// serving numbers the definition (state.Graph.Serving), set before
	// the informers start: every reconcile's observation carries it.
	serving int64
	// grant is the graph's run's (confine.Grant), for its controller.
	grant confine.Grant
	// stopped is set once the graph stops being served: a reconcile still
	// in flight must not bring its instance back into the state.
	stopped atomic.Bool
}

// externalRef is an object a graph reads by name.
type externalRef struct {
	gvr       schema.GroupVersionResource
	name      string
	namespace string // "" means the instance's namespace
}

// externalSelector is an external collection a graph reads by a static
// label selector.
type externalSelector struct {
	gvr       schema.GroupVersionResource
	selector  labels.Selector
	namespace string // "" means every namespace
}

func resourceName(gvr schema.GroupVersionResource) string {
	if gvr.Group == "" {
		return gvr.Resource
	}
	return gvr.Resource + "." + gvr.Group
}

// apply starts, restarts or stops the graph named by u. It returns the new
// run, or nil when nothing new is served.
func (e *Engine) apply(ctx context.Context, u source.Update) *graphRun {
	e.graphs.mu.Lock()
	old := e.graphs.runs[u.Name]
	delete(e.graphs.runs, u.Name)
	e.graphs.mu.Unlock()
	if old != nil {
		old.cancel()
		<-old.done
	}
	switch {
	case u.Removed:
		e.store.RemoveGraph(u.Name)
		e.log.Info("graph removed: stopped its controller", "graph", u.Name)
		return nil
	case u.Err != nil:
		e.store.SetGraph(state.Graph{Name: u.Name, Source: u.Source, Err: u.Err.Error(), Definition: definitionOf(u)})
		e.log.Error(u.Err, "invalid graph: skipped", "graph", u.Name, "source", u.Source)
		if u.Object != nil {
			// Kept as a stopped run so that its status is written again
			// when this process starts writing.
			r := &graphRun{name: u.Name, cancel: func() {}, ready: make(chan struct{}), done: make(chan struct{}),
				cluster: true, outcome: rgdstatus.Outcome{BuildErr: u.Err}, shown: shownFor(u)}
			r.markReady()
			close(r.done)
			e.graphs.mu.Lock()
			e.graphs.runs[u.Name] = r
			e.graphs.mu.Unlock()
			e.noteConditions(r)
			e.syncRGDStatus(ctx, r)
		}
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &graphRun{name: u.Name, cancel: cancel, ready: make(chan struct{}), done: make(chan struct{}),
		cluster: u.Object != nil, allowBreaking: u.AllowBreakingChanges(), shown: shownFor(u),
		grant: confine.Grant{AnyNamespace: u.AnyNamespace(), Kinds: e.o.AllowChildKinds}}
	e.graphs.mu.Lock()
	e.graphs.runs[u.Name] = r
	e.graphs.mu.Unlock()
	go e.runGraph(ctx, r, u.RGD, definitionOf(u))
	return r
}

// stopAll stops every graph (on shutdown).
func (e *Engine) stopAll() {
	e.graphs.mu.Lock()
	runs := e.graphs.runs
	e.graphs.runs = map[string]*graphRun{}
	e.graphs.mu.Unlock()
	for _, r := range runs {
		r.cancel()
	}
	for _, r := range runs {
		<-r.done
	}
}

// runGraph builds the graph, makes sure its CRD is there, serves its
// instances until ctx is done, then cleans up.
func (e *Engine) runGraph(ctx context.Context, r *graphRun, rgd *graph.ResourceGraphDefinition, def *state.GraphDefinition) {
	defer close(r.done)
	defer r.markReady()
	gr := &graphStart{e: e, r: r, rgd: rgd, log: e.log.WithValues("graph", rgd.Name), info: state.Graph{Name: rgd.Name, Source: rgd.Source, Definition: def}}
	g, ok := gr.build(ctx)
	if !ok || !gr.admit(ctx, g) {
		return
	}
	s, ok := gr.reserve(ctx, g)
	if !ok {
		return
	}
	defer e.release(s)
	e.store.SetGraph(gr.info)
	if !gr.awaitCRD(ctx, g) {
		return
	}
	e.cl.set.RESTMapper().Reset()
	e.checkAccess(ctx, s.gvr, g.Instance.Namespaced)
	defer e.store.ForgetAccess(s.resource)
	// KindReady is written together with ControllerReady below: one write.
	r.mu.Lock()
	r.outcome.CRDErr, r.outcome.CRDReady = nil, true
	r.mu.Unlock()
	s.serving = e.graphs.nextServing(rgd.Name)
	gr.info.Serving = s.serving
	if err := s.start(ctx); err != nil {
		if ctx.Err() == nil {
			gr.fail(err, "cannot serve the graph")
			e.setOutcome(ctx, r, func(o *rgdstatus.Outcome) { o.ServeErr = err })
		}
		return
	}
	gr.info.Err = ""
	gr.info.Served = true
	e.store.SetGraph(gr.info)
	e.store.ForgetUnserved(gr.info.Resource) // listed again, or gone from the cluster
	metrics.Graphs.Inc()
	defer metrics.Graphs.Dec()
	gr.log.Info("serving graph", "resource", gr.info.Resource, "kind", gr.info.Kind)
	e.setOutcome(ctx, r, func(o *rgdstatus.Outcome) { o.ServeErr, o.Serving = nil, true })
	r.markReady()
	<-ctx.Done()
	e.stopServing(s)
}

// graphStart is one graph on its way to being served (runGraph's steps).
type graphStart struct {
	e    *Engine
	r    *graphRun
	rgd  *graph.ResourceGraphDefinition
	log  logr.Logger
	info state.Graph // what the state shows of the graph
}

// fail shows err as the graph's state and logs it.
func (gr *graphStart) fail(err error, what string) {
	gr.info.Err = err.Error()
	gr.info.Served, gr.info.Serving = false, 0
	gr.e.store.SetGraph(gr.info)
	gr.log.Error(err, what)
}

// build makes the decision `kroscope validate` makes: a graph it rejects
// is not served, and says why where the graph's state shows.
func (gr *graphStart) build(ctx context.Context) (*graph.Graph, bool) {
	e := gr.e
	g, large, err := graph.NewBuilder(append(GraphOptions(e.cl.set, e.cl.schemas, e.o.CELOmit), graph.WithLimits(e.o.CELLimits))...).Servable(gr.rgd)
	for _, w := range large {
		gr.log.Info("warning: " + w.Error())
	}
	if err != nil {
		gr.fail(err, "invalid graph: skipped")
		e.setOutcome(ctx, gr.r, func(o *rgdstatus.Outcome) { o.BuildErr = err })
		return nil, false
	}
	info := &gr.info
	info.APIVersion = g.Instance.GVK.GroupVersion().String()
	info.Kind = g.Instance.GVK.Kind
	info.Resource = resourceName(g.Instance.GVR)
	sum := graphview.Summarize(g)
	info.Template = &sum
	deps := map[string][]string{}
	for id, res := range g.Resources {
		deps[id] = res.Dependencies
	}
	gr.r.mu.Lock()
	gr.r.outcome = rgdstatus.Outcome{Kind: info.Kind, TopologicalOrder: g.TopologicalOrder, Dependencies: deps}
	gr.r.mu.Unlock()
	return g, true
}

// reserve claims the graph's instance kind while its CRD is prepared; a
// kind another graph serves is a conflict.
func (gr *graphStart) reserve(ctx context.Context, g *graph.Graph) (*served, bool) {
	e := gr.e
	res := gr.info.Resource
	e.graphs.mu.Lock()
	if other, ok := e.graphs.byRes[res]; ok {
		e.graphs.mu.Unlock()
		err := fmt.Errorf("%s is already served by graph %q (%s); this graph (%s) is not served until one of them changes its kind", res, other.graph.Name, other.graph.Source, gr.rgd.Source)
		gr.fail(err, "graph conflicts with another")
		e.setOutcome(ctx, gr.r, func(o *rgdstatus.Outcome) { o.CRDErr = err })
		return nil, false
	}
	s := &served{e: e, graph: g, gvr: g.Instance.GVR, resource: res, children: map[schema.GroupVersionResource]bool{}, grant: gr.r.grant}
	e.graphs.byRes[res] = s
	e.graphs.mu.Unlock()
	return s, true
}

// release gives up s's kind, and its controller's event broadcaster (one
// leaked per restart otherwise).
func (e *Engine) release(s *served) {
	e.graphs.mu.Lock()
	if e.graphs.byRes[s.resource] == s {
		delete(e.graphs.byRes, s.resource)
	}
	if e.graphs.served[s.gvr] == s {
		delete(e.graphs.served, s.gvr)
	}
	e.graphs.mu.Unlock()
	if s.ctrl != nil {
		s.ctrl.Close()
	}
}

// awaitCRD makes sure the instance CRD is there: applied when this
// process writes, awaited otherwise. False when the graph is not served.
func (gr *graphStart) awaitCRD(ctx context.Context, g *graph.Graph) bool {
	e, r := gr.e, gr.r
	lastReason := ""
	for backoff := time.Second; ; backoff = min(backoff*2, 30*time.Second) {
		skipped, err := e.ensureCRD(ctx, g, r.allowBreaking)
		if err == nil {
			if skipped != "" {
				gr.info.Note = skipped
				gr.log.Info("instance CRD: " + skipped)
			}
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		var foreign *crd.ForeignError
		var breaking *breakingChangeError
		if errors.As(err, &foreign) || errors.As(err, &breaking) {
			gr.fail(err, "not serving the graph")
			e.setOutcome(ctx, r, func(o *rgdstatus.Outcome) { o.CRDErr = err })
			<-ctx.Done()
			return false
		}
		reason := e.crdWaitReason(gr.rgd.Name, err)
		gr.info.Err = reason
		e.store.SetGraph(gr.info)
		e.setOutcome(ctx, r, func(o *rgdstatus.Outcome) { o.CRDErr = err })
		// Said once per reason: a graph kro rejects waits for as long as
		// kro does, and a line every 30s says nothing new.
		if reason != lastReason {
			gr.log.Info("instance CRD not ready; retrying until it is", "reason", reason)
			lastReason = reason
		}
		r.markReady() // startup does not wait for a cluster that is not ready
		select {
		case <-ctx.Done():
			return false
		case <-time.After(backoff):
		}
	}
}

// stopServing: no worker picks s's instances any more, observations of
// reconciles still in flight are dropped, and the kind's instances stay
// in the state marked Unserved (their informer is gone, but they are
// still stored: a refused new definition must not hide them).
func (e *Engine) stopServing(s *served) {
	e.graphs.mu.Lock()
	if e.graphs.served[s.gvr] == s {
		delete(e.graphs.served, s.gvr)
	}
	e.graphs.mu.Unlock()
	s.stopped.Store(true)
	uids := map[string]bool{}
	for _, in := range e.store.Snapshot().Instances {
		if in.Key.Resource == s.resource {
			uids[in.UID] = true
		}
	}
	e.store.Unserve(s.resource)
	// What the reconciles read and wrote of the kind's instances and their
	// children goes too: no watch of the graph is left to remove it.
	e.reader.dropGraph(s.gvr, uids)
}

// crdWaitReason says why a graph's CRD is not there yet. While observing,
// the CRD comes from kro (or the lease holder): when kro reports the graph
// blocked (it rejected it, say), kro's own reason is the one that counts,
// not the CRD's absence.
func (e *Engine) crdWaitReason(graph string, err error) string {
	if e.writing() {
		return err.Error()
	}
	if k := e.store.KroOf(graph); k != nil && k.Blocked != "" {
		return "kro does not serve this graph: " + k.Blocked
	}
	return err.Error()
}

// start builds the controller and the informers and waits for them to sync.
func (s *served) start(ctx context.Context) error {
	e := s.e
	g := s.graph
	s.ctrl = reconciler.NewController(e.log.WithName("reconciler").WithValues("graph", g.Name), e.o.ReconcileConfig, s.gvr, g, e.cl.set,
		g.DefaultServiceAccounts, metadata.NewGraphLabeler(g.Name, g.UID))
	observe := e.observer(s)
	s.ctrl.SetObserver(func(o reconciler.Observation) {
		if !s.stopped.Load() {
			observe(o)
		}
	})
	s.ctrl.SetOptions(reconciler.Options{AllowAdoption: e.o.AllowAdoption, Reader: e.reader, Grant: s.grant})

	// Instances of a cluster-scoped kind have no namespace to narrow to:
	// --namespace cannot hide them, and their children may be anywhere.
	instanceNS := e.o.Namespace
	if !g.Instance.Namespaced {
		instanceNS = ""
	}
	specs := s.watchSpecs(instanceNS)
	for _, sp := range specs {
		release := e.informers.watches.Acquire(sp)
		go func() { <-ctx.Done(); release() }()
	}
	// Before the instances are queued: their first reconciles then find
	// their children in the cache (a restart reads no child one by one).
	for _, sp := range specs {
		if s.children[sp.GVR] && sp.LabelSelector == metadata.InstanceIDLabel {
			e.reader.seedChildren(ctx, sp)
		}
	}

	inf := dynamicinformer.NewFilteredDynamicInformer(e.cl.set.Dynamic(), s.gvr, instanceNS, 0, cache.Indexers{}, nil).Informer()
	// Instances are kept slim and mostly encoded (storeInstance).
	if err := inf.SetTransform(storeInstance); err != nil {
		return err
	}
	mon := e.informers.group.MonitoredScope(inf, s.resource, s.resource, instanceNS)
	if _, err := inf.AddEventHandler(e.reader.instanceEvents(s.gvr, s.instanceHandler(mon))); err != nil {
		return err
	}
	e.graphs.mu.Lock()
	s.inf = inf
	e.graphs.served[s.gvr] = s
	e.graphs.mu.Unlock()
	go mon.Run(ctx, time.Second)
	if !cache.WaitForCacheSync(ctx.Done(), watch.SyncedOrForbidden(inf, mon)) || !e.informers.watches.WaitForSync(ctx, e.servedSpecs(specs)...) {
		return ctx.Err()
	}
	return nil
}

// watchSpecs are the watches s needs: children (by kroscope's instance
// label), external references (by name) and external collections (by
// their label selector); it records what they route to in s.
func (s *served) watchSpecs(instanceNS string) []watch.Spec {
	e, g := s.e, s.graph
	var specs []watch.Spec
	for _, id := range g.TopologicalOrder {
		r := g.Resources[id]
		ns := instanceNS
		if !r.Namespaced {
			ns = ""
		}
		if !r.External {
			s.children[r.GVR] = true
			specs = append(specs, watch.Spec{GVR: r.GVR, Namespace: ns, LabelSelector: metadata.InstanceIDLabel})
			continue
		}
		if r.ExternalCollection {
			sel, ok := r.StaticSelector()
			if !ok {
				e.log.V(1).Info("external collection selector is templated: not watched, read again on the requeue timer", "graph", g.Name, "resource", id)
				continue
			}
			parsed, err := labels.Parse(sel)
			if err != nil {
				e.log.V(1).Info("external collection selector cannot be watched, read again on the requeue timer", "graph", g.Name, "resource", id, "error", err.Error())
				continue
			}
			if rns, static := r.StaticNamespace(); static && rns != "" && r.Namespaced {
				ns = rns
			}
			s.selectors = append(s.selectors, externalSelector{gvr: r.GVR, selector: parsed, namespace: ns})
			specs = append(specs, watch.Spec{GVR: r.GVR, Namespace: ns, LabelSelector: sel, ExternalSelector: true})
			continue
		}
		ref, ok := externalOf(r)
		if !ok {
			e.log.V(1).Info("externalRef name is templated: not watched by name", "graph", g.Name, "resource", id)
			continue
		}
		s.external = append(s.external, ref)
		if ref.namespace != "" {
			ns = ref.namespace
		}
		specs = append(specs, watch.Spec{GVR: r.GVR, Namespace: ns, FieldSelector: "metadata.name=" + ref.name})
	}
	return specs
}

// servedSpecs leaves out the watches of kinds the API server does not
// serve (per the REST mapper's discovery): they cannot sync until a CRD
// appears, and a graph whose resource of such a kind is excluded by
// includeWhen must still be served. The watches stay acquired and sync
// once the kind is served.
func (e *Engine) servedSpecs(specs []watch.Spec) []watch.Spec {
	m := e.cl.set.RESTMapper()
	if m == nil {
		return specs
	}
	var out []watch.Spec
	for _, sp := range specs {
		if _, err := m.KindFor(sp.GVR); meta.IsNoMatchError(err) {
			e.log.Info("not waiting for the watch of a kind the API server does not serve", "resource", sp.GVR.String())
			continue
		}
		out = append(out, sp)
	}
	return out
}

// externalOf reads an externalRef's name and namespace from its template;
// false when the name is templated.
func externalOf(r *graph.Resource) (externalRef, bool) {
	md, _ := r.Template["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	ns, _ := md["namespace"].(string)
	if name == "" || strings.Contains(name, "${") || strings.Contains(ns, "${") {
		return externalRef{}, false
	}
	return externalRef{gvr: r.GVR, name: name, namespace: ns}, true
}

// instanceHandler turns instance events into state and queue items. Events
// that arrive after the graph stopped (an informer delivers what it had
// queued) are dropped: they would bring a forgotten instance back.
func (s *served) instanceHandler(mon *watch.Monitor) cache.ResourceEventHandler {
	e := s.e
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if s.stopped.Load() {
				return
			}
			mon.Event("add")
			if u, gvk, ok := instanceMeta(obj); ok {
				e.noteWrites(instanceWhat(s.resource, u), u)
				e.noteInstance(s, u, gvk, nil)
				e.enqueue(s, u.GetNamespace(), u.GetName())
			}
		},
		UpdateFunc: func(oldObj, obj any) {
			if s.stopped.Load() {
				return
			}
			mon.Event("update")
			o, _, ok1 := instanceMeta(oldObj)
			u, gvk, ok2 := instanceMeta(obj)
			if !ok1 || !ok2 {
				return
			}
			e.noteWrites(instanceWhat(s.resource, u), u)
			e.noteInstance(s, u, gvk, o)
			if needsReconcile(o, u) {
				it := item{gvr: s.gvr, namespace: u.GetNamespace(), name: u.GetName()}
				if requeueAsked(o, u) {
					e.work.forget(it) // a user asked for it: no backoff
				}
				e.work.add(it)
			}
		},
		DeleteFunc: func(obj any) {
			mon.Event("delete")
			if m := watch.MetaOf(obj); m != nil {
				e.store.RemoveInstance(state.InstanceKey{Resource: s.resource, Namespace: m.GetNamespace(), Name: m.GetName()})
				e.work.forget(item{gvr: s.gvr, namespace: m.GetNamespace(), name: m.GetName()})
			}
		},
	}
}

// ownLabels are the instance labels kroscope itself writes: a change of
// only these is kroscope's own write and needs no reconcile.
var ownLabels = map[string]bool{
	metadata.OwnedLabel: true, metadata.GraphNameLabel: true, metadata.ManagedByLabel: true,
	metadata.KroVersionLabel: true, metadata.GraphIDLabel: true, metadata.ApplySetIDLabel: true,
}

// ownAnnotations are the ApplySet inventory annotations the reconciler
// writes on the instance. Every other annotation counts, the
// kro.run/reconcile pause switch among them: flipping it moves no
// generation but must wake the instance.
var ownAnnotations = map[string]bool{
	metadata.ApplySetToolingAnnotation: true, metadata.ApplySetGroupKindsAnnotation: true,
	metadata.ApplySetNamespacesAnnotation: true, metadata.InventoryHashAnnotation: true,
	metadata.PrunedGraphAnnotation: true,
}

// needsReconcile: a spec change (generation), a label or annotation change
// by someone else, or deletion. The instance's own status writes do not
// count, so a status write never loops back into a reconcile.
func needsReconcile(old, cur metav1.Object) bool {
	if old.GetGeneration() != cur.GetGeneration() {
		return true
	}
	if (old.GetDeletionTimestamp() == nil) != (cur.GetDeletionTimestamp() == nil) {
		return true
	}
	if !sameMap(old.GetAnnotations(), cur.GetAnnotations(), ownAnnotations) {
		return true
	}
	return !sameMap(old.GetLabels(), cur.GetLabels(), ownLabels)
}

func sameMap(a, b map[string]string, ignore map[string]bool) bool {
	for k, v := range a {
		if !ignore[k] {
			if w, ok := b[k]; !ok || w != v {
				return false
			}
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok && !ignore[k] {
			return false
		}
	}
	return true
}

// noteInstance records an instance's identity in the state when it is new
// or its generation or deletion changed.
func (e *Engine) noteInstance(s *served, u metav1.Object, gvk schema.GroupVersionKind, old metav1.Object) {
	if old != nil && old.GetGeneration() == u.GetGeneration() && (old.GetDeletionTimestamp() == nil) == (u.GetDeletionTimestamp() == nil) {
		return
	}
	key := state.InstanceKey{Resource: s.resource, Namespace: u.GetNamespace(), Name: u.GetName()}
	e.store.UpdateInstance(key, func(in *state.Instance) {
		in.APIVersion = gvk.GroupVersion().String()
		in.Kind = gvk.Kind
		in.Graph = s.graph.Name
		in.UID = string(u.GetUID())
		in.Generation = u.GetGeneration()
		in.Created = u.GetCreationTimestamp().Time
		in.Deleting = u.GetDeletionTimestamp() != nil
		in.Unserved = false
		if in.Layers == nil {
			in.Layers = s.graph.Layers
		}
		if in.Resources == nil {
			in.Resources = pendingResources(s.graph)
		}
	})
}
