package engine

import (
	"context"
	"errors"
	"fmt"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime/pkg/reconcile"
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
	gs       *graphServer
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

// graphServer serves each graph from build to stop: it decides whether
// a definition is served (built, admitted, its CRD there, its kind not
// another graph's), and sets up its controller, informers and watches.
type graphServer struct {
	o         Options
	log       logr.Logger
	store     *state.Store
	cl        *clients
	table     *graphTable
	reader    *reader
	informers *informers
	work      *workQueue
	access    *access
	status    *rgdStatus
	crds      *crdApplier
	rights    *rightsCache
	// noteWrites hands an instance's managedFields to kro detection.
	noteWrites func(what string, obj metav1.Object)
}

func newGraphServer(o Options, log logr.Logger, store *state.Store, cl *clients, table *graphTable, rd *reader, inf *informers,
	work *workQueue, kro *kroPresence, acc *access, writing func() bool) *graphServer {
	return &graphServer{o: o, log: log, store: store, cl: cl, table: table, reader: rd, informers: inf, work: work, access: acc,
		status:     &rgdStatus{set: cl.gated(), store: store, log: log, writing: writing},
		crds:       &crdApplier{set: cl.gated(), store: store, writing: writing, force: o.ForceCRD},
		rights:     &rightsCache{base: cl.own(), namespace: o.Namespace, enabled: o.CheckRights, askUser: acc.user, user: acc.userName},
		noteWrites: kro.noteWrites}
}

// apply starts, restarts or stops the graph named by u. It returns the new
// run, or nil when nothing new is served.
func (gs *graphServer) apply(ctx context.Context, u source.Update) *graphRun {
	if old := gs.table.takeRun(u.Name); old != nil {
		old.cancel()
		<-old.done
	}
	switch {
	case u.Removed:
		gs.store.RemoveGraph(u.Name)
		gs.log.Info("graph removed: stopped its controller", "graph", u.Name)
		return nil
	case u.Err != nil:
		gs.store.SetGraph(state.Graph{Name: u.Name, Source: u.Source, Err: u.Err.Error(), Definition: definitionOf(u)})
		gs.log.Error(u.Err, "invalid graph: skipped", "graph", u.Name, "source", u.Source)
		if u.Object != nil {
			// Kept as a stopped run so that its status is written again
			// when this process starts writing.
			r := &graphRun{name: u.Name, cancel: func() {}, ready: make(chan struct{}), done: make(chan struct{}),
				cluster: true, outcome: rgdstatus.Outcome{BuildErr: u.Err}, shown: shownFor(u)}
			r.markReady()
			close(r.done)
			gs.table.putRun(r)
			gs.status.noteConditions(r)
			gs.status.sync(ctx, r)
		}
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &graphRun{name: u.Name, cancel: cancel, ready: make(chan struct{}), done: make(chan struct{}),
		cluster: u.Object != nil, allowBreaking: u.AllowBreakingChanges(), shown: shownFor(u),
		grant: confine.Grant{AnyNamespace: u.AnyNamespace(), Kinds: gs.o.AllowChildKinds}}
	gs.table.putRun(r)
	go gs.run(ctx, r, u.RGD, definitionOf(u))
	return r
}

// stopAll stops every graph (on shutdown).
func (gs *graphServer) stopAll() {
	runs := gs.table.takeRuns()
	for _, r := range runs {
		r.cancel()
	}
	for _, r := range runs {
		<-r.done
	}
}

// syncAllStatus re-writes every cluster graph's status that differs from
// its outcome (after this process starts writing: the previous writer may
// have left other values). A graph still starting is left to write its
// own once it settles (rgdstatus.Outcome.Settled).
func (gs *graphServer) syncAllStatus(ctx context.Context) {
	gs.status.syncAll(ctx, gs.table.allRuns())
}

// run builds the graph, makes sure its CRD is there, serves its
// instances until ctx is done, then cleans up.
func (gs *graphServer) run(ctx context.Context, r *graphRun, rgd *graph.ResourceGraphDefinition, def *state.GraphDefinition) {
	defer close(r.done)
	defer r.markReady()
	gr := &graphStart{gs: gs, r: r, rgd: rgd, rights: gs.rights, log: gs.log.WithValues("graph", rgd.Name), info: state.Graph{Name: rgd.Name, Source: rgd.Source, Definition: def}}
	g, ok := gr.build(ctx)
	if !ok || !gr.admit(ctx, g) {
		return
	}
	s, ok := gr.reserve(ctx, g)
	if !ok {
		return
	}
	defer gs.release(s)
	gs.store.SetGraph(gr.info)
	if !gr.awaitCRD(ctx, g) {
		return
	}
	gs.cl.gated().RESTMapper().Reset()
	gs.access.check(ctx, s.gvr, g.Instance.Namespaced)
	defer gs.store.ForgetAccess(s.resource)
	// KindReady is written together with ControllerReady below: one write.
	r.mu.Lock()
	r.outcome.CRDErr, r.outcome.CRDReady = nil, true
	r.mu.Unlock()
	s.serving = gs.table.nextServing(rgd.Name)
	gr.info.Serving = s.serving
	if err := s.start(ctx); err != nil {
		if ctx.Err() == nil {
			gr.fail(err, "cannot serve the graph")
			gr.setOutcome(ctx, func(o *rgdstatus.Outcome) { o.ServeErr = err })
		}
		return
	}
	gr.info.Err = ""
	gr.info.Served = true
	gs.store.SetGraph(gr.info)
	gs.store.ForgetUnserved(gr.info.Resource) // listed again, or gone from the cluster
	metrics.Graphs.Inc()
	defer metrics.Graphs.Dec()
	gr.log.Info("serving graph", "resource", gr.info.Resource, "kind", gr.info.Kind)
	gr.setOutcome(ctx, func(o *rgdstatus.Outcome) { o.ServeErr, o.Serving = nil, true })
	r.markReady()
	<-ctx.Done()
	gs.stopServing(s)
}

// graphStart is one graph on its way to being served (graphServer.run's
// steps).
type graphStart struct {
	gs     *graphServer
	r      *graphRun
	rgd    *graph.ResourceGraphDefinition
	rights *rightsCache
	log    logr.Logger
	info   state.Graph // what the state shows of the graph
}

// fail shows err as the graph's state and logs it.
func (gr *graphStart) fail(err error, what string) {
	gr.info.Err = err.Error()
	gr.info.Served, gr.info.Serving = false, 0
	gr.gs.store.SetGraph(gr.info)
	gr.log.Error(err, what)
}

// setOutcome records how far serving got and writes the RGD's status.
func (gr *graphStart) setOutcome(ctx context.Context, fn func(*rgdstatus.Outcome)) {
	gr.gs.status.setOutcome(ctx, gr.r, fn)
}

// build makes the decision `kroscope validate` makes: a graph it rejects
// is not served, and says why where the graph's state shows.
func (gr *graphStart) build(ctx context.Context) (*graph.Graph, bool) {
	gs := gr.gs
	g, large, err := graph.NewBuilder(append(GraphOptions(gs.cl.gated(), gs.cl.schemaResolver(), gs.o.CELOmit), graph.WithLimits(gs.o.CELLimits))...).Servable(gr.rgd)
	for _, w := range large {
		gr.log.Info("warning: " + w.Error())
	}
	if err != nil {
		gr.fail(err, "invalid graph: skipped")
		gr.setOutcome(ctx, func(o *rgdstatus.Outcome) { o.BuildErr = err })
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
	res := gr.info.Resource
	s := &served{gs: gr.gs, graph: g, gvr: g.Instance.GVR, resource: res, children: map[schema.GroupVersionResource]bool{}, grant: gr.r.grant}
	if other := gr.gs.table.reserve(s); other != nil {
		err := fmt.Errorf("%s is already served by graph %q (%s); this graph (%s) is not served until one of them changes its kind", res, other.graph.Name, other.graph.Source, gr.rgd.Source)
		gr.fail(err, "graph conflicts with another")
		gr.setOutcome(ctx, func(o *rgdstatus.Outcome) { o.CRDErr = err })
		return nil, false
	}
	return s, true
}

// release gives up s's kind, and its controller's event broadcaster (one
// leaked per restart otherwise).
func (gs *graphServer) release(s *served) {
	gs.table.release(s)
	if s.ctrl != nil {
		s.ctrl.Close()
	}
}

// awaitCRD makes sure the instance CRD is there: applied when this
// process writes, awaited otherwise. False when the graph is not served.
func (gr *graphStart) awaitCRD(ctx context.Context, g *graph.Graph) bool {
	crds, r := gr.gs.crds, gr.r
	lastReason := ""
	for backoff := time.Second; ; backoff = min(backoff*2, 30*time.Second) {
		skipped, err := crds.ensure(ctx, g, r.allowBreaking)
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
			gr.setOutcome(ctx, func(o *rgdstatus.Outcome) { o.CRDErr = err })
			<-ctx.Done()
			return false
		}
		reason := crds.waitReason(gr.rgd.Name, err)
		gr.info.Err = reason
		gr.gs.store.SetGraph(gr.info)
		gr.setOutcome(ctx, func(o *rgdstatus.Outcome) { o.CRDErr = err })
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
func (gs *graphServer) stopServing(s *served) {
	gs.table.unserve(s)
	s.stopped.Store(true)
	uids := map[string]bool{}
	for _, in := range gs.store.Snapshot().Instances {
		if in.Key.Resource == s.resource {
			uids[in.UID] = true
		}
	}
	gs.store.Unserve(s.resource)
	// What the reconciles read and wrote of the kind's instances and their
	// children goes too: no watch of the graph is left to remove it.
	gs.reader.dropGraph(s.gvr, uids)
}

// start builds the controller and the informers and waits for them to sync.
func (s *served) start(ctx context.Context) error {
	gs, g := s.gs, s.graph
	s.ctrl = reconciler.NewController(gs.log.WithName("reconciler").WithValues("graph", g.Name), gs.o.ReconcileConfig, s.gvr, g, gs.cl.gated(),
		g.DefaultServiceAccounts, metadata.NewGraphLabeler(g.Name, g.UID))
	observe := observer(gs.store, s, gs.reader.kept)
	s.ctrl.SetObserver(func(o reconciler.Observation) {
		if !s.stopped.Load() {
			observe(o)
		}
	})
	s.ctrl.SetOptions(reconciler.Options{AllowAdoption: gs.o.AllowAdoption, Reader: gs.reader, Grant: s.grant})

	// Instances of a cluster-scoped kind have no namespace to narrow to:
	// --namespace cannot hide them, and their children may be anywhere.
	instanceNS := gs.o.Namespace
	if !g.Instance.Namespaced {
		instanceNS = ""
	}
	specs := s.watchSpecs(instanceNS)
	for _, sp := range specs {
		release := gs.informers.acquire(sp)
		go func() { <-ctx.Done(); release() }()
	}
	// Before the instances are queued: their first reconciles then find
	// their children in the cache (a restart reads no child one by one).
	for _, sp := range specs {
		if s.children[sp.GVR] && sp.LabelSelector == metadata.InstanceIDLabel {
			gs.reader.seedChildren(ctx, sp)
		}
	}

	inf := dynamicinformer.NewFilteredDynamicInformer(gs.cl.gated().Dynamic(), s.gvr, instanceNS, 0, cache.Indexers{}, nil).Informer()
	// Instances are kept slim and mostly encoded (storeInstance).
	if err := inf.SetTransform(storeInstance); err != nil {
		return err
	}
	mon := gs.informers.monitoredScope(inf, s.resource, s.resource, instanceNS)
	if _, err := inf.AddEventHandler(gs.reader.instanceEvents(s.gvr, s.instanceHandler(mon))); err != nil {
		return err
	}
	gs.table.serve(s, inf)
	go mon.Run(ctx, time.Second)
	if !mon.WaitForSync(ctx) || !gs.informers.waitForSync(ctx, gs.servedSpecs(specs)...) {
		return ctx.Err()
	}
	return nil
}

// watchSpecs are the watches s needs: children (by kroscope's instance
// label), external references (by name) and external collections (by
// their label selector); it records what they route to in s.
func (s *served) watchSpecs(instanceNS string) []watch.Spec {
	log, g := s.gs.log, s.graph
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
				log.V(1).Info("external collection selector is templated: not watched, read again on the requeue timer", "graph", g.Name, "resource", id)
				continue
			}
			parsed, err := labels.Parse(sel)
			if err != nil {
				log.V(1).Info("external collection selector cannot be watched, read again on the requeue timer", "graph", g.Name, "resource", id, "error", err.Error())
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
			log.V(1).Info("externalRef name is templated: not watched by name", "graph", g.Name, "resource", id)
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
func (gs *graphServer) servedSpecs(specs []watch.Spec) []watch.Spec {
	m := gs.cl.gated().RESTMapper()
	if m == nil {
		return specs
	}
	var out []watch.Spec
	for _, sp := range specs {
		if _, err := m.KindFor(sp.GVR); meta.IsNoMatchError(err) {
			gs.log.Info("not waiting for the watch of a kind the API server does not serve", "resource", sp.GVR.String())
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
	gs := s.gs
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if s.stopped.Load() {
				return
			}
			mon.Event("add")
			if u, gvk, ok := instanceMeta(obj); ok {
				gs.noteWrites(instanceWhat(s.resource, u), u)
				s.noteInstance(u, gvk, nil)
				gs.work.add(item{gvr: s.gvr, namespace: u.GetNamespace(), name: u.GetName()})
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
			gs.noteWrites(instanceWhat(s.resource, u), u)
			s.noteInstance(u, gvk, o)
			if needsReconcile(o, u) {
				it := item{gvr: s.gvr, namespace: u.GetNamespace(), name: u.GetName()}
				if requeueAsked(o, u) {
					gs.work.forget(it) // a user asked for it: no backoff
				}
				gs.work.add(it)
			}
		},
		DeleteFunc: func(obj any) {
			mon.Event("delete")
			if m := watch.MetaOf(obj); m != nil {
				gs.store.RemoveInstance(state.InstanceKey{Resource: s.resource, Namespace: m.GetNamespace(), Name: m.GetName()})
				gs.work.forget(item{gvr: s.gvr, namespace: m.GetNamespace(), name: m.GetName()})
			}
		},
	}
}

// noteInstance records an instance's identity in the state when it is new
// or its generation or deletion changed.
func (s *served) noteInstance(u metav1.Object, gvk schema.GroupVersionKind, old metav1.Object) {
	if old != nil && old.GetGeneration() == u.GetGeneration() && (old.GetDeletionTimestamp() == nil) == (u.GetDeletionTimestamp() == nil) {
		return
	}
	key := state.InstanceKey{Resource: s.resource, Namespace: u.GetNamespace(), Name: u.GetName()}
	s.gs.store.UpdateInstance(key, func(in *state.Instance) {
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

// reconcile runs the controller, turning a panic into an error (and an
// ERROR state) so one bad instance cannot stop a worker.
func (s *served) reconcile(ctx context.Context, it item) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("reconcile panicked: %v", p)
			s.gs.log.Error(err, "reconcile panicked", "instance", it.namespace+"/"+it.name)
			key := state.InstanceKey{Resource: s.resource, Namespace: it.namespace, Name: it.name}
			s.gs.store.UpdateExisting(key, func(in *state.Instance) {
				in.State = reconciler.InstanceStateError
				in.Message = err.Error()
				in.LastError = state.RememberError(in.LastError, in.Message, "", time.Now())
			})
		}
	}()
	// The API calls made for the instance are logged to it.
	ctx = withInstance(ctx, state.InstanceKey{Resource: s.resource, Namespace: it.namespace, Name: it.name})
	return s.ctrl.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: it.namespace, Name: it.name}})
}
