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
	"net/http"
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
	"k8s.io/client-go/transport"

	"github.com/kroscope/kroscope/engine/authority"
	"github.com/kroscope/kroscope/engine/lease"
	"github.com/kroscope/kroscope/engine/logsink"
	"github.com/kroscope/kroscope/engine/metrics"
	"github.com/kroscope/kroscope/engine/objcache"
	"github.com/kroscope/kroscope/engine/probes"
	"github.com/kroscope/kroscope/engine/readonly"
	"github.com/kroscope/kroscope/engine/source"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/engine/watch"
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

// Engine is a running set of reconcilers and their state. Its fields are
// grouped by what they decide, each group's fields read and written only
// by the file that declares it (others call its methods): wr (writer.go:
// who may write), kro (kro.go: kro's controller and its view of the
// graphs), graphs (graphs.go: what is served), work (queue.go and
// queuestats.go: the queue and the workers), reader (reader.go), health
// (health.go). cl and informers are set once (New, Run's first step) and
// read everywhere.
type Engine struct {
	o       Options
	store   *state.Store
	log     logr.Logger
	cl      clients
	wr      *writer
	kro     kroState
	graphs  graphTable
	work    workQueue
	reader  *reader
	health  health // heartbeat and progress, for Healthy
	running atomic.Bool
	// informers are the shared watches of children and external objects
	// and their health (set up by Run's first step).
	informers informers
}

// clients are the engine's connections to the API server.
type clients struct {
	set  *client.Set // writes go through the write gate
	base *client.Set // the caller's set, for the Lease and access reviews
	// schemas types every graph's resources from the API server's
	// OpenAPI, shared so graphs over the same kinds fetch it once.
	schemas *graph.CachedSchemaResolver
	// apiErrors counts the set's failed requests.
	apiErrors atomic.Int64
}

// informers are the engine's shared watches.
type informers struct {
	group   *watch.Group
	watches *watch.Manager
}

// New checks o and prepares an engine; Run starts it.
func New(o Options) (*Engine, error) {
	if o.ClientSet == nil {
		return nil, errors.New("engine: no client set")
	}
	o = o.withDefaults()
	e := &Engine{
		o:      o,
		store:  state.NewStore(),
		graphs: graphTable{served: map[schema.GroupVersionResource]*served{}, byRes: map[string]*served{}, runs: map[string]*graphRun{}},
		cl:     clients{base: o.ClientSet},
	}
	e.reader = &reader{e: e, cache: objcache.New()}
	// Logs go to the caller's sink and to the state's log pane.
	e.log = logsink.Tee(o.Log, logsink.New(logsink.Options{Store: e.store}))
	// Writes are allowed only while the write authority says so.
	e.wr = newWriter(o, o.ClientSet.Kubernetes() != nil)
	set, err := gatedSet(o.ClientSet, e.wr.gate, &e.cl.apiErrors, e.noteCall)
	if err != nil {
		return nil, err
	}
	e.cl.set = set
	e.cl.schemas = graph.NewCachedSchemaResolver(set.Discovery(), 0)
	e.work.setUp()
	e.store.SetCluster(o.Cluster)
	e.store.SetMode(e.decision().Mode)
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

// gatedSet returns a client set whose writes pass through gate, which
// answers its MayWrite (so the reconciler observes while it is closed), and
// whose failed requests are counted.
func gatedSet(s *client.Set, gate *readonly.Gate, apiErrors *atomic.Int64, note callNote) (*client.Set, error) {
	cfg := s.Config()
	if cfg == nil {
		// An in-memory set (the demo): wrap the clients themselves.
		out := client.NewSetFromClients(client.Clients{
			Dynamic:    readonly.Dynamic(s.Dynamic(), gate),
			Metadata:   readonly.Metadata(s.Metadata(), gate),
			Kubernetes: s.Kubernetes(),
			Discovery:  s.Discovery(),
			Mapper:     s.RESTMapper(),
			Impersonate: func(user string) (*client.Set, error) {
				inner, err := s.WithImpersonation(user)
				if err != nil {
					return nil, err
				}
				return gatedSet(inner, gate, apiErrors, note)
			},
		})
		out.GateWrites(gate.Open)
		return out, nil
	}
	if cfg.QPS == 0 && cfg.RateLimiter == nil {
		cfg.QPS = DefaultClientQPS
	}
	cfg = readonly.WrapConfig(cfg, gate)
	cfg.Wrap(transport.WrapperFunc(func(rt http.RoundTripper) http.RoundTripper {
		return &errorCounter{next: rt, n: apiErrors, note: note}
	}))
	out, err := client.NewSet(cfg)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	out.GateWrites(gate.Open) // the reconciler asks the gate whether it observes
	return out, nil
}

// callNote hears every API response (or transport error), to log the
// failed ones of an instance.
type callNote func(*http.Request, *http.Response, error)

// errorCounter counts API requests that failed (transport error, 429, 5xx)
// and tells note about each call.
type errorCounter struct {
	next http.RoundTripper
	n    *atomic.Int64
	note callNote
}

func (c *errorCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if c.note != nil {
		c.note(req, resp, err)
	}
	if (err != nil && !readonly.IsReadOnly(err) && req.Context().Err() == nil) ||
		(resp != nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500)) {
		c.n.Add(1)
		metrics.APIErrors.Inc()
	}
	return resp, err
}

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

// startWatches sets up the shared watches (children, external objects)
// and, with a real API server, the probe that notices it coming back.
func (e *Engine) startWatches(ctx context.Context) {
	e.informers.group = watch.NewGroup(e.store)
	e.informers.group.OnAccess(func(w state.Watch, granted bool) { e.noteAccess(ctx, w, granted) })
	e.informers.watches = watch.NewManager(ctx, e.cl.set.Metadata(), e.informers.group, e.reader.childEvents(e.routeWatchEvent))
	if d := e.cl.set.Discovery(); d != nil && d.RESTClient() != nil {
		go e.informers.group.Probe(ctx, 2*time.Second, func(ctx context.Context) error {
			return d.RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
		}, e.recovered)
	}
}

// serveEndpoints starts /metrics and the health probes when asked for,
// and the counters loop (also the heartbeat, so it runs from the start).
func (e *Engine) serveEndpoints(ctx context.Context) error {
	if err := e.serveMetrics(ctx); err != nil {
		return err
	}
	e.startHealth(time.Now())
	go e.counters(ctx)
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
	d := e.cl.set.Discovery()
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
			for e.processNext(workCtx) {
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
	e.startKroDetection(ctx, clusterRGDs)
	e.decideCampaign(ctx)
	if e.decision().NoLeaseClient {
		e.log.Info("no typed client for the lease: observing")
	}
	e.checkLeaseAccess(ctx)
	e.followOtherWriters(ctx)
	go e.syncWhenWriting(ctx)
	e.update(func(f *authority.Facts) { f.Running = true })
	go e.recheckDeniedAccess(ctx)
	if clusterRGDs {
		go e.watchGraphRevisions(ctx)
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
		if r := e.apply(ctx, u); r != nil {
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
// changes; it returns the runs of the graphs there at start.
func (e *Engine) watchClusterGraphs(ctx context.Context) []*graphRun {
	var mu sync.Mutex
	var initial []*graphRun
	starting := true
	note := func(u *unstructured.Unstructured) { e.noteKroRGD(ctx, u) }
	err := source.Cluster(ctx, e.cl.set.Dynamic(), e.informers.group, func(u source.Update) {
		if u.Removed {
			e.forgetKroRGD(u.Name)
		} else if u.Object != nil {
			note(u.Object)
		}
		r := e.apply(ctx, u)
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
	e.log.Info("engine running", "graphs", len(initial), "workers", e.o.Workers, "mode", authority.Word(e.decision().Mode))
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
	e.log.Info("shutting down", "grace", e.o.ShutdownGrace, "inFlight", e.inFlight())
	stopWork()
	e.work.shutDown() // the queue stops handing out items
	wait := func(what string, f func()) bool {
		done := make(chan struct{})
		go func() { f(); close(done) }()
		select {
		case <-done:
			return true
		case <-deadline.C:
			e.log.Info("shutdown grace passed; exiting with "+what+" still running", "grace", e.o.ShutdownGrace, "inFlight", e.inFlight())
			return false
		}
	}
	if !wait("reconciles", workers.Wait) {
		return
	}
	// The lease goes only once no worker writes any more, so the next
	// holder never writes beside one of ours.
	if leaseDone := e.releaseLease(); leaseDone != nil {
		wait("the lease's release", func() { <-leaseDone })
	}
	wait("graphs", e.stopAll)
}

// fatal records an error that stops the engine and returns it.
func (e *Engine) fatal(title string, cause error, hint string) error {
	e.store.SetFatal(&state.Fatal{Title: title, Cause: cause.Error(), Hint: hint})
	e.log.Error(cause, title)
	return fmt.Errorf("%s: %w", title, cause)
}

// servedGraphs returns the graphs served now, copied under the engine's
// lock so that callers can make API calls without holding it.
func (e *Engine) servedGraphs() []*served {
	return e.graphs.all()
}

// recovered runs when the API server is reachable again: instances that
// failed during the outage are retried now instead of after their backoff.
func (e *Engine) recovered() {
	// Locally only: an attached engine must not write requeue annotations
	// on its own.
	n := 0
	for _, in := range e.store.Snapshot().Instances {
		if in.State != reconciler.InstanceStateError {
			continue
		}
		if s, err := e.servedFor(in.Key); err == nil {
			e.requeueLocal(s, in.Key)
			n++
		}
	}
	e.log.Info("API server reachable again; retrying failed instances", "instances", n)
}
