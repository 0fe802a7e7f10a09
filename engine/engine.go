// Package engine runs kroscope's reconcilers live: it finds the graphs
// (files and the cluster), serves their instance kinds (CRD, informers), routes
// watch events on instances, children and external references into one
// rate-limited work queue, runs the reconcilers with N workers, and keeps the
// observable state (engine/state) that the TUI and `kroscope run` read.
package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/kroscope/kroscope/engine/authority"
	"github.com/kroscope/kroscope/engine/lease"
	"github.com/kroscope/kroscope/engine/logsink"
	"github.com/kroscope/kroscope/engine/probes"
	"github.com/kroscope/kroscope/engine/source"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/graph"
)

// Defaults for Options left zero.
const (
	// DefaultRequeueInterval is how long an instance that waits (readiness,
	// an unwatched dependency) sleeps before it is checked again. Children
	// and external references are watched, so this is only a safety net.
	DefaultRequeueInterval = 30 * time.Second
	// WorkersPerCPU sets the default worker count: reconciles mostly wait
	// on the API server (one round trip per write, in order), so many per
	// CPU keep it busy. With 4 per CPU the engine benchmark's 8 workers were
	// all busy with a queue of hundreds while the API server had room:
	// 500 instances took 11.3 s; with 32 workers, 7.9 s, at the same RSS.
	WorkersPerCPU = 16
	// ShutdownGrace is the default of Options.ShutdownGrace.
	ShutdownGrace = 10 * time.Second
	// DefaultClientQPS is used when the rest.Config leaves QPS unset: -1
	// turns client-side throttling off (client-go's default of 5 QPS, or
	// even 200, made the client the bottleneck of a reconcile burst) and
	// leaves flow control to the API server's priority and fairness.
	DefaultClientQPS = -1
)

// Options configure an Engine.
type Options struct {
	// ClientSet is the connection (the demo passes an in-memory one).
	ClientSet *client.Set
	// RGDPaths are --rgd files and folders.
	RGDPaths []string
	// MaxFileSize bounds each --rgd file (0: graph.DefaultMaxFileSize).
	MaxFileSize int64
	// WatchClusterRGDs also serves kro.run/v1alpha1 ResourceGraphDefinitions
	// from the cluster (when the CRD exists there).
	WatchClusterRGDs bool
	// Namespace limits the instances watched; "" means all namespaces.
	Namespace string
	// Workers reconcile in parallel; 0 means WorkersPerCPU per CPU.
	Workers int
	// RequeueInterval is the reconciler's DefaultRequeueDuration when
	// ReconcileConfig leaves it zero; 0 means DefaultRequeueInterval.
	RequeueInterval time.Duration
	// Observe forces read-only mode: nothing is ever written.
	Observe bool
	// ForceCRD lets kroscope overwrite an instance CRD it did not create.
	ForceCRD bool
	// CELOmit allows omit() in templates (kro's CELOmitFunction gate).
	CELOmit bool
	// CELLimits bound every CEL evaluation (zero fields: graph.DefaultLimits).
	CELLimits graph.Limits
	// LeaseNamespace/LeaseName name the Lease that elects the one writer
	// (defaults kube-system/kroscope); Identity is this process's name in it
	// (default hostname_random).
	LeaseNamespace, LeaseName string
	Identity                  string
	// LeaseDuration is how long a vanished holder keeps the lease (default 15s).
	LeaseDuration time.Duration
	// DisableLease makes the engine write without a lease (the demo).
	DisableLease bool
	// CampaignIfFree campaigns for the Lease only when, at start, nobody
	// else holds it (no holder, or one that stopped renewing it): the local
	// TUI does not take the Lease from the in-cluster replicas, it follows
	// the holder (and never writes the Lease) for the rest of its run.
	// `kroscope run` leaves it false and always campaigns.
	CampaignIfFree bool
	// Attach forwards the user's requeue and delete to the cluster while
	// another kroscope holds the Lease or kro's controller reconciles:
	// requeue writes RequeueAnnotation on the instance (for the holder's
	// watch), delete is an API delete. Without it an observing engine
	// refuses both.
	Attach bool
	// AskBeforeWriting (the TUI, unless --yes): a kroscope about to take a
	// free Lease, and so to write with the user's own credentials, waits
	// for Consent first, saying so on the header (Mode.Ask).
	AskBeforeWriting bool
	// Log receives the engine's logs; they are also mirrored into the
	// state's log pane.
	Log logr.Logger
	// Cluster is shown in the status bar.
	Cluster         state.Cluster
	ReconcileConfig reconciler.ReconcileConfig
	AllowAdoption   bool
	// AllowChildKinds are the sensitive kinds (confine.Sensitive) graphs
	// may create: --allow-child-kind.
	AllowChildKinds []schema.GroupKind
	// CheckRights asks the API server, before serving a graph, whether
	// this identity holds every rule the graph needs (rights.ForGraph);
	// while it lacks one, the graph is shown as not served, naming it.
	// `kroscope run` (the in-cluster Deployment) sets it.
	CheckRights bool
	// MetricsBindAddress serves /metrics when set (e.g. "127.0.0.1:8078").
	MetricsBindAddress string
	// MetricsSecure serves them over HTTPS, only to clients the API server
	// authenticates and authorizes for GET /metrics (a token whose
	// identity is granted the non-resource URL /metrics).
	MetricsSecure bool
	// HealthProbeBindAddress serves /healthz and /readyz when set (e.g.
	// ":8081"): see Healthy and Ready.
	HealthProbeBindAddress string
	// TakeOver reconciles even though kro's controller was seen on the
	// cluster before this process started and is not proven gone (a kro
	// that was stopped); a kro seen while this process runs (lease,
	// Deployment, new writes) is still not fought.
	TakeOver bool
	// KroSilence is how long kro must leave a change to a cluster graph
	// unanswered for that to prove it absent (default
	// krodetect.DefaultSilence); negative never.
	KroSilence time.Duration
	// KroPollInterval is how often kro's Lease and Deployment are checked
	// (default DefaultKroPollInterval); negative turns detection off.
	KroPollInterval time.Duration
	// AccessRecheck is how often kinds this user was denied something on
	// are asked again (default DefaultAccessRecheck); negative never.
	AccessRecheck time.Duration
	// ShutdownGrace bounds the shutdown once Run's context is done: workers
	// are cancelled at once, and whatever has not stopped by then is left
	// behind (and named in the log); 0 means the ShutdownGrace constant.
	ShutdownGrace time.Duration
}

// DefaultKroPollInterval: how long a kro that starts may run beside
// kroscope before kroscope notices its Lease or Deployment (its writes are
// seen at once through the watches).
const DefaultKroPollInterval = 5 * time.Second

// Engine wires together the groups that run the reconcilers. Each group
// is a type that decides one thing, declared with its methods in its own
// file; no other file selects its fields (TestEngineGroupsKeepToTheirFiles).
// Engine itself keeps only Run's steps and the exported API, each a call
// into the groups.
type Engine struct {
	o       Options
	store   *state.Store
	log     logr.Logger
	running atomic.Bool

	cl        *clients     // clients.go: the connections, writes gated
	wr        *writer      // writer.go: the write gate and the Lease campaign
	peers     *peers       // peers.go: other kroscopes' Leases
	kro       *kroPresence // kro.go: whether kro's controller runs
	kroView   *kroView     // kroview.go: what kro reports per graph
	access    *access      // capabilities.go: what this user may do
	informers *informers   // informers.go: the shared watches
	table     *graphTable  // graphtable.go: the graphs served, by kind
	graphs    *graphServer // graphs.go: each graph from build to stop
	work      *workQueue   // queue.go: the queue and the workers' holds
	router    *router      // router.go: which instances an event wakes
	reader    *reader      // reader.go: the reconcilers' reads
	health    *health      // health.go: heartbeat and progress
}

// New checks o and prepares an engine; Run starts it.
func New(o Options) (*Engine, error) {
	if o.ClientSet == nil {
		return nil, errors.New("engine: no client set")
	}
	o = o.withDefaults()
	set, err := unthrottled(o.ClientSet) // every group's requests go through it
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	o.ClientSet = set
	e := &Engine{o: o, store: state.NewStore()}
	// Logs go to the caller's sink and to the state's log pane.
	e.log = logsink.Tee(o.Log, logsink.New(logsink.Options{Store: e.store}))
	e.table = newGraphTable()
	// A change of the gate wakes every instance: each reconcile asks the
	// gate whether it writes (client.Set.MayWrite).
	e.wr = newWriter(o, e.store, e.log, func() { e.router.wakeAll() })
	cl, err := newClients(o.ClientSet, e.wr.writeGate(), callLog(e.store, e.log))
	if err != nil {
		return nil, err
	}
	e.cl = cl
	e.peers = &peers{facts: e.wr, o: o, base: o.ClientSet, store: e.store, log: e.log}
	e.informers = &informers{}
	e.reader = newReader(e.table, cl.gated(), e.log, e.informers, o.Namespace)
	e.work = newWorkQueue(e.table, e.store, e.log, e.reader.echoes)
	e.router = &router{table: e.table, work: e.work, store: e.store, log: e.log}
	e.kroView = &kroView{set: cl.gated(), informers: e.informers, store: e.store, log: e.log, writing: e.wr.writing}
	e.kro = &kroPresence{o: o, set: cl.gated(), base: o.ClientSet, facts: e.wr, log: e.log, changed: e.kroView.refreshAll}
	e.access = &access{o: o, base: o.ClientSet, store: e.store, log: e.log, served: e.table.all, lease: e.wr}
	e.graphs = newGraphServer(o, e.log, e.store, cl, e.table, e.reader, e.informers, e.work, e.kro, e.access, e.wr.writing)
	e.health = newHealth(e.table.alive, e.work.busyWorkers, o.Workers)
	e.store.SetCluster(o.Cluster)
	e.store.SetMode(e.wr.decision().Mode)
	e.store.SetEngine(state.Engine{Workers: o.Workers})
	e.store.SetStartup(state.Startup{Phase: "starting"})
	return e, nil
}

// withDefaults fills in what o leaves zero.
func (o Options) withDefaults() Options {
	if o.Workers <= 0 {
		o.Workers = WorkersPerCPU * runtime.NumCPU()
	}
	if o.RequeueInterval <= 0 {
		o.RequeueInterval = DefaultRequeueInterval
	}
	if o.ShutdownGrace <= 0 {
		o.ShutdownGrace = ShutdownGrace
	}
	if o.ReconcileConfig.DefaultRequeueDuration <= 0 {
		o.ReconcileConfig.DefaultRequeueDuration = o.RequeueInterval
	}
	if o.LeaseNamespace == "" {
		o.LeaseNamespace = lease.DefaultNamespace
	}
	if o.LeaseName == "" {
		o.LeaseName = lease.DefaultName
	}
	if o.LeaseDuration <= 0 {
		o.LeaseDuration = lease.DefaultLeaseDuration
	}
	if o.Identity == "" {
		host, _ := os.Hostname()
		o.Identity = host + "_" + rand.String(6)
	}
	if o.Cluster.Namespace == "" {
		o.Cluster.Namespace = o.Namespace
	}
	if o.KroPollInterval == 0 {
		o.KroPollInterval = DefaultKroPollInterval
	}
	if o.AccessRecheck == 0 {
		o.AccessRecheck = DefaultAccessRecheck
	}
	return o
}

// leaseName is "namespace/name" of the Lease that elects the writer.
func (o Options) leaseName() string { return o.LeaseNamespace + "/" + o.LeaseName }

// Store returns the observable state.
func (e *Engine) Store() *state.Store { return e.store }

// Snapshot returns the current state (tui.Backend).
func (e *Engine) Snapshot() *state.Snapshot { return e.store.Snapshot() }

// Subscribe returns coalesced change notifications (tui.Backend).
func (e *Engine) Subscribe() (<-chan struct{}, func()) { return e.store.Subscribe() }

// Log returns the engine's logger (it also feeds the state's log pane).
func (e *Engine) Log() logr.Logger { return e.log }

// Run starts everything and blocks until ctx is done, then shuts down:
// in-flight reconciles get ShutdownGrace to finish, informers stop. It
// returns an error only when the engine cannot run at all (also recorded as
// the state's Fatal). Each step is a method below, in the order run.
func (e *Engine) Run(ctx context.Context) error {
	if !e.running.CompareAndSwap(false, true) {
		return errors.New("engine: Run called twice")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	e.startWatches(ctx)
	if err := e.serveEndpoints(ctx); err != nil {
		return err
	}
	clusterRGDs, err := e.connect(ctx)
	if err != nil {
		return err
	}
	// Workers start now so instances of the first graphs are reconciled
	// while later graphs are still starting.
	stopWork, workers := e.startWorkers(ctx)
	defer stopWork()
	e.decideWriter(ctx, clusterRGDs)
	initial, err := e.loadGraphs(ctx, clusterRGDs)
	if err != nil {
		// The Lease campaign has started: a failed engine stops it as a
		// stopped one does, or it would renew the Lease for nothing and
		// every other kroscope would wait on it.
		e.shutdown(stopWork, workers)
		return err
	}
	e.awaitGraphs(ctx, initial)
	<-ctx.Done()
	e.shutdown(stopWork, workers)
	return nil
}

// startWatches sets up the shared watches (children, external objects),
// whose events feed the reader's cache and then the router, and, with a
// real API server, the probe that notices it coming back (failed
// instances are then retried at once).
func (e *Engine) startWatches(ctx context.Context) {
	e.informers.start(ctx, e.store, e.cl.gated().Metadata(), e.reader.childEvents(e.router.route),
		func(w state.Watch, granted bool) { e.access.noteWatch(ctx, w, granted) })
	if d := e.cl.gated().Discovery(); d != nil && d.RESTClient() != nil {
		go e.informers.probe(ctx, func(ctx context.Context) error {
			return d.RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
		}, e.router.retryFailed)
	}
}

// serveEndpoints starts /metrics and the health probes when asked for,
// and the counters loop (also the heartbeat, so it runs from the start).
func (e *Engine) serveEndpoints(ctx context.Context) error {
	if err := e.serveMetrics(ctx); err != nil {
		return err
	}
	e.health.start(time.Now())
	go counters(ctx, e.work.reconciled, e.health.heartbeat, func(n int64, rps float64) {
		e.store.SetEngine(e.work.figures(e.o.Workers, e.cl.failed(), n, rps))
	})
	if e.o.HealthProbeBindAddress != "" && e.o.HealthProbeBindAddress != "0" {
		addr, err := probes.Serve(ctx, e.o.HealthProbeBindAddress, func() error { return e.Healthy(time.Now()) }, e.Ready)
		if err != nil {
			return e.fatal("cannot serve health probes", err, "choose another --health-probe-bind-address")
		}
		e.log.Info("serving health probes", "address", addr.String())
	}
	return nil
}

// unreachableHint is what to check when the API server does not answer:
// where the connection came from (the kubeconfig file and context) when
// known, and the demo, which needs no cluster.
func unreachableHint(c state.Cluster) string {
	where := "--kubeconfig and --context"
	if c.Source != "" {
		where = c.Source
	}
	return "Is the cluster at " + c.Server + " running, and is " + where + " the one meant? " +
		"`kubectl get ns` with the same flags tells. Or try `kroscope demo`, which needs no cluster."
}

// Unreachable is what to tell a user whose first request to the API
// server failed with err: a title and a hint, one wording for every
// command (the TUI and run through connect, plan).
func Unreachable(err error, c state.Cluster) (title, hint string) {
	switch {
	case apierrors.IsUnauthorized(err):
		return "the API server rejected the credentials", "log in again or refresh the kubeconfig's token or certificate"
	case apierrors.IsForbidden(err):
		return "forbidden by the API server", "this user needs read access to the cluster (and write access to reconcile)"
	}
	return "cannot reach the API server", unreachableHint(c)
}

// connect asks the API server for its version (a clear error when it
// cannot be reached or refuses the credentials) and whether it serves
// kro's ResourceGraphDefinitions.
func (e *Engine) connect(ctx context.Context) (clusterRGDs bool, err error) {
	e.store.SetStartup(state.Startup{Phase: "connecting"})
	d := e.cl.gated().Discovery()
	if d == nil {
		return false, nil
	}
	if _, err := d.ServerVersion(); err != nil {
		title, hint := Unreachable(err, e.o.Cluster)
		return false, e.fatal(title, err, hint)
	}
	if !e.o.WatchClusterRGDs {
		return false, nil
	}
	ok, err := source.ClusterHasRGDs(d)
	if err != nil {
		e.log.Error(err, "cannot tell whether the cluster has ResourceGraphDefinitions; not watching them")
	}
	return ok, nil
}

// startWorkers starts Options.Workers workers; stop cancels their
// context (not ctx's: shutdown gives them a grace), workers waits for them.
func (e *Engine) startWorkers(ctx context.Context) (stop context.CancelFunc, workers *sync.WaitGroup) {
	workCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	workers = &sync.WaitGroup{}
	for range e.o.Workers {
		workers.Go(func() {
			for e.work.processNext(workCtx) {
			}
		})
	}
	return stop, workers
}

// decideWriter gathers the facts the write authority needs before
// anything is written: kro's controller (checked, then watched), a Lease
// held by another kroscope, this user's access to the Lease; then the
// engine may campaign.
func (e *Engine) decideWriter(ctx context.Context, clusterRGDs bool) {
	e.kro.start(ctx, clusterRGDs)
	e.peers.decideCampaign(ctx)
	if e.wr.decision().NoLeaseClient {
		e.log.Info("no typed client for the lease: observing")
	}
	e.access.checkLease(ctx)
	e.peers.followOtherWriters(ctx)
	// Each time this process starts writing, it writes what the previous
	// writer left: the cluster graphs' status, kro's finalizers.
	go e.wr.syncWhenWriting(ctx, func(ctx context.Context) {
		e.graphs.syncAllStatus(ctx)
		e.kroView.releaseFinalizers(ctx)
	})
	e.wr.update(func(f *authority.Facts) { f.Running = true })
	go e.access.recheckDenied(ctx)
	if clusterRGDs {
		go e.kroView.watchRevisions(ctx)
	}
}

// loadGraphs starts the graphs of the --rgd files and, when the cluster
// has them, of its ResourceGraphDefinitions (watched from then on); it
// returns the runs started, for startup to wait on.
func (e *Engine) loadGraphs(ctx context.Context, clusterRGDs bool) ([]*graphRun, error) {
	e.store.SetStartup(state.Startup{Phase: "loading graphs"})
	var initial []*graphRun
	loader := graph.Loader{MaxFileSize: e.o.MaxFileSize, Warn: func(path, why string) {
		e.log.Info("--rgd: "+why, "path", path)
	}}
	for _, u := range source.Files(loader, e.o.RGDPaths) {
		if r := e.graphs.apply(ctx, u); r != nil {
			initial = append(initial, r)
		}
	}
	if clusterRGDs {
		initial = append(initial, e.watchClusterGraphs(ctx)...)
	}
	if len(e.o.RGDPaths) == 0 && !clusterRGDs && ctx.Err() == nil {
		return nil, e.fatal("no graphs to serve", errors.New("no --rgd files were given and the cluster has no kro.run ResourceGraphDefinition CRD"),
			"pass --rgd FILE_OR_DIR, or install kro's CRDs in the cluster")
	}
	return initial, nil
}

// watchClusterGraphs serves the cluster's graphs and follows their
// changes; it returns the runs of the graphs there at start. Every
// version seen (status updates too) is evidence for kro detection and
// kro's view of the graph.
func (e *Engine) watchClusterGraphs(ctx context.Context) []*graphRun {
	var mu sync.Mutex
	var initial []*graphRun
	starting := true
	note := func(u *unstructured.Unstructured) {
		e.kro.noteGraph(u)
		e.kroView.note(ctx, u)
	}
	err := source.Cluster(ctx, e.cl.gated().Dynamic(), e.informers.watchGroup(), func(u source.Update) {
		if u.Removed {
			e.kro.forgetGraph(u.Name)
			e.kroView.forget(u.Name)
		} else if u.Object != nil {
			note(u.Object)
		}
		r := e.graphs.apply(ctx, u)
		mu.Lock()
		if starting && r != nil {
			initial = append(initial, r)
		}
		mu.Unlock()
	}, note)
	mu.Lock()
	defer mu.Unlock()
	starting = false
	if err != nil && ctx.Err() == nil {
		e.log.Error(err, "watching the cluster's ResourceGraphDefinitions")
	}
	return initial
}

// awaitGraphs ends startup when every initial graph is served or has
// failed.
func (e *Engine) awaitGraphs(ctx context.Context, initial []*graphRun) {
	for i, r := range initial {
		e.store.SetStartup(state.Startup{Phase: "starting graphs", Step: i, Total: len(initial)})
		select {
		case <-r.ready:
		case <-ctx.Done():
		}
	}
	e.store.SetStartup(state.Startup{Done: true, Phase: "running", Step: len(initial), Total: len(initial)})
	e.log.Info("engine running", "graphs", len(initial), "workers", e.o.Workers, "mode", authority.Word(e.wr.decision().Mode))
}

// shutdown ends Run within Options.ShutdownGrace whatever a worker is
// doing: the workers' context is cancelled first (API calls and CEL return
// early), the queue stops handing out items, and the workers and graphs get
// what is left of the grace. A worker stuck past it (a call that ignores
// its context) is left behind and its instance named in the log; the
// process can exit.
func (e *Engine) shutdown(stopWork context.CancelFunc, workers *sync.WaitGroup) {
	deadline := time.NewTimer(e.o.ShutdownGrace)
	defer deadline.Stop()
	e.log.Info("shutting down", "grace", e.o.ShutdownGrace, "inFlight", e.work.inFlight())
	stopWork()
	e.work.shutDown() // the queue stops handing out items
	wait := func(what string, f func()) bool {
		done := make(chan struct{})
		go func() { f(); close(done) }()
		select {
		case <-done:
			return true
		case <-deadline.C:
			e.log.Info("shutdown grace passed; exiting with "+what+" still running", "grace", e.o.ShutdownGrace, "inFlight", e.work.inFlight())
			return false
		}
	}
	if !wait("reconciles", workers.Wait) {
		return
	}
	// The lease goes only once no worker writes any more, so the next
	// holder never writes beside one of ours.
	if leaseDone := e.wr.releaseLease(); leaseDone != nil {
		wait("the lease's release", func() { <-leaseDone })
	}
	wait("graphs", e.graphs.stopAll)
}

// fatal records an error that stops the engine and returns it.
func (e *Engine) fatal(title string, cause error, hint string) error {
	e.store.SetFatal(&state.Fatal{Title: title, Cause: cause.Error(), Hint: hint})
	e.log.Error(cause, title)
	return fmt.Errorf("%s: %w", title, cause)
}
