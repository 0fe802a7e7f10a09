package reconciler

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/confine"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
	"github.com/kroscope/kroscope/reconciler/redact"
	"github.com/kroscope/kroscope/reconciler/requeue"
)

// Options tune a Controller beyond the seed's ReconcileConfig.
type Options struct {
	// AllowAdoption lets the controller take over an existing object that
	// carries no ownership labels. Off by default: such an object is an ERROR.
	AllowAdoption bool
	// Observe makes the controller read-only: it writes nothing (no apply,
	// no delete, no finalizer, no status, no event) and computes states from
	// what it observes, readyWhen included. A client set whose write gate is
	// closed (client.Set.GateWrites) observes the same way.
	Observe bool
	// Recorder receives Kubernetes Events; nil builds one from the client
	// set's typed clientset when there is one.
	Recorder record.EventRecorder
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
	// Reader serves reads from the caller's watches (see Reader); nil means
	// every read is a request.
	Reader Reader
	// Grant is what a cluster admin allowed the graph's children beyond
	// the default (see confine.Decide): the graph's scope annotation and
	// the sensitive kinds a flag allows.
	Grant confine.Grant
}

// Controller manages the reconciliation of the instances of one graph.
// It keeps no per-instance state between reconciles: everything it needs is
// read from the API server each time.
type Controller struct {
	log                    logr.Logger
	cfg                    ReconcileConfig
	gvr                    schema.GroupVersionResource
	rg                     *graph.Graph
	clientSet              *client.Set
	defaultServiceAccounts map[string]string
	labeler                metadata.Labeler
	// applyOrders are the resources' deletion waves (see applyOrders).
	applyOrders map[string]int
	// graphHash identifies the graph's managed resources (see needsPrune).
	graphHash string

	mu       sync.RWMutex
	observer Observer
	opts     Options

	// ownRecorder is built on first use when Options.Recorder is nil, so
	// replacing options never leaks an event broadcaster.
	recorderOnce sync.Once
	ownRecorder  record.EventRecorder
	// broadcaster feeds ownRecorder; Close shuts it down.
	broadcaster record.EventBroadcaster
	closed      bool

	// recreated counts the passes in a row that created each resource's
	// object (see RecreateLimit).
	recreated recreations
}

// NewController creates a new Controller instance.
func NewController(
	log logr.Logger,
	reconcileConfig ReconcileConfig,
	gvr schema.GroupVersionResource,
	rg *graph.Graph,
	clientSet *client.Set,
	defaultServiceAccounts map[string]string,
	instanceLabeler metadata.Labeler,
) *Controller {
	registerMetrics()
	if reconcileConfig.DefaultRequeueDuration <= 0 {
		reconcileConfig.DefaultRequeueDuration = 3 * time.Second
	}
	if instanceLabeler == nil {
		instanceLabeler = metadata.Labels{}
	}
	c := &Controller{
		log:                    log,
		cfg:                    reconcileConfig,
		gvr:                    gvr,
		rg:                     rg,
		clientSet:              clientSet,
		defaultServiceAccounts: defaultServiceAccounts,
		labeler:                instanceLabeler,
		applyOrders:            applyOrders(rg),
		graphHash:              graphHash(rg),
	}
	return c
}

// SetObserver sets the function that receives an Observation after every
// reconcile. The engine calls it before the first Reconcile.
func (c *Controller) SetObserver(o Observer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.observer = o
}

// SetOptions replaces the options.
func (c *Controller) SetOptions(o Options) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.opts = o
}

// Close releases what the controller started for its graph (the event
// broadcaster and its goroutines and caches). Call it once the graph
// stops and no Reconcile runs any more; Events after it are dropped.
func (c *Controller) Close() {
	c.mu.Lock()
	b := c.broadcaster
	c.broadcaster, c.closed = nil, true
	c.mu.Unlock()
	if b != nil {
		b.Shutdown()
	}
}

// options returns the options, the observer, whether this reconcile may
// write (see mayWrite) and the event recorder to use (nil when it may
// not: Events are writes).
func (c *Controller) options() (Options, Observer, bool, record.EventRecorder) {
	c.mu.RLock()
	opts, obs := c.opts, c.observer
	c.mu.RUnlock()
	writes := mayWrite(opts.Observe, c.clientSet.MayWrite())
	if !writes {
		return opts, obs, false, nil
	}
	if opts.Recorder != nil {
		return opts, obs, true, opts.Recorder
	}
	c.recorderOnce.Do(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.closed {
			c.ownRecorder, c.broadcaster = newRecorder(c.clientSet)
		}
	})
	return opts, obs, true, c.ownRecorder
}

// Reconcile is a handler function that reconciles the instance and its
// sub-resources. Its error tells the queue what to do (see requeue.Decide).
func (c *Controller) Reconcile(ctx context.Context, req ctrl.Request) error {
	opts, observer, writes, recorder := c.options()
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	start := now()
	// Every message leaving this reconcile goes through red, which learns
	// the values of the Secrets the reconcile reads (see redact.go).
	red := &redact.Set{}
	log := red.Logger(c.log.WithValues("instance", req.NamespacedName.String()))
	ctx = redact.NewContext(ctx, red)

	opts.Now, opts.Recorder = now, recorder
	r := c.newRun(ctx, req, runOptions{Options: opts, observe: !writes}, red, log)
	err := r.reconcile()
	if observer != nil {
		obs := r.observation()
		obs.GVR = c.gvr
		obs.Start = start
		obs.Duration = now().Sub(start)
		observer(obs)
	}
	if err != nil && !isRequeue(err) {
		log.V(1).Info("reconcile failed", "error", err.Error())
	}
	return red.Error(err)
}

// newRun is the runtime of one reconcile of req; its parts that act for
// the instance come later (newParts), once the instance is read.
func (c *Controller) newRun(ctx context.Context, req ctrl.Request, opts runOptions, red *redact.Set, log logr.Logger) *run {
	return &run{c: c, ctx: ctx, log: log, opts: opts, req: req, red: red, g: c.rg, cfg: c.cfg, obs: newObservations(c.rg, red)}
}

// newParts wires the parts of a run that act for the instance inst
// (found through io, as ServiceAccount sa when not ""), each given the
// few others it asks and what it needs of the controller's settings.
func (c *Controller) newParts(io reach, sa string, inst *unstructured.Unstructured, obs *observations, opts runOptions, red *redact.Set, log logr.Logger) *parts {
	p := &parts{io: io, kinds: kinds{set: c.clientSet, g: c.rg}}
	p.inst = instance{u: inst, gvr: c.gvr, io: io}
	var as kubernetes.Interface // Events as the ServiceAccount, not kroscope
	if set := io.objs.Set(); sa != "" && set != c.clientSet && set.Kubernetes() != nil {
		as = set.Kubernetes()
	}
	p.ev = events{ctx: io.ctx, log: log, inst: &p.inst, red: red, recorder: opts.Recorder, as: as, sa: sa, observe: io.observe}
	p.aset = applySet{inst: &p.inst, io: io, g: c.rg, kinds: p.kinds, ev: &p.ev, graphHash: c.graphHash, applyOrders: c.applyOrders}
	p.marks = marks{inst: &p.inst, aset: &p.aset, labeler: c.labeler, graphHash: c.graphHash}
	p.w = writer{io: io, inst: &p.inst, aset: &p.aset, kinds: p.kinds, ev: &p.ev, red: red, adopt: opts.AllowAdoption, grant: opts.Grant,
		applyOrders: c.applyOrders, recreated: &c.recreated, now: opts.Now}
	p.steps = steps{obs: obs, w: &p.w, kinds: p.kinds, io: io}
	p.status = statusWriter{inst: &p.inst, obs: obs, io: io, g: c.rg, ev: &p.ev, red: red, log: log, now: opts.Now}
	p.del = deletion{obs: obs, io: io, inst: &p.inst, aset: &p.aset, kinds: p.kinds, marks: &p.marks, ev: &p.ev,
		recreated: &c.recreated, cfg: c.cfg, g: c.rg, now: opts.Now}
	return p
}

// isRequeue reports whether err is one of the typed requeue errors (a
// normal outcome, not a failure worth logging).
func isRequeue(err error) bool {
	var a *requeue.NeededAfter
	var n *requeue.Needed
	var none *requeue.NoRequeue
	return errors.As(err, &a) || errors.As(err, &n) || errors.As(err, &none)
}

// getInstance reads the instance through objs; (nil, nil) when it does
// not exist.
func (c *Controller) getInstance(ctx context.Context, objs *client.Objects, ns, name string) (*unstructured.Unstructured, error) {
	u, err := objs.Instance(ctx, c.gvr, ns, name)
	if err != nil {
		return nil, fmt.Errorf("getting instance %s %s/%s: %w", c.gvr.Resource, ns, name, err)
	}
	return u, nil
}
