package engine

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kroscope/kroscope/engine/metrics"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/engine/watch"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/metadata"
	"github.com/kroscope/kroscope/reconciler/requeue"
)

// item is one instance to reconcile.
// workQueue is the work queue and what the workers keep beside it.
type workQueue struct {
	queue   workqueue.TypedRateLimitingInterface[item]
	limiter *recordingLimiter // the queue's, so a retry's backoff can be shown
	// busy counts the workers reconciling now; reconciles, those done;
	// peak, the most busy at once since the last sample (see sampleBusy).
	busy, reconciles, peak atomic.Int64
	// flying are the items workers hold, for the shutdown log.
	flightMu sync.Mutex
	flying   map[item]struct{}
	// streaks counts each item's rounds of immediate requeues in a row.
	streaks map[item]int
	// held are the child events that came for an item while a worker
	// held it (see wakeForChild).
	held map[item][]watch.Event
}

type item struct {
	gvr       schema.GroupVersionResource
	namespace string
	name      string
}

// String names the instance as "resource.group namespace/name".
func (it item) String() string {
	gr := it.gvr.GroupResource().String()
	if it.namespace == "" {
		return gr + " " + it.name
	}
	return gr + " " + it.namespace + "/" + it.name
}

// immediatePasses bounds how many times in a row one worker reconciles an
// instance that asks for an immediate requeue before it goes back to the
// queue.
const immediatePasses = 3

// processNext reconciles one item; false once the queue is shut down.
func (e *Engine) processNext(ctx context.Context) bool {
	it, shutdown := e.work.queue.Get()
	if shutdown {
		return false
	}
	defer e.work.queue.Done(it)
	s := e.graphs.of(it.gvr)
	if s == nil {
		e.work.queue.Forget(it) // its graph stopped
		return true
	}
	e.work.begin()
	e.work.flightMu.Lock()
	if e.work.flying == nil {
		e.work.flying = map[item]struct{}{}
	}
	e.work.flying[it] = struct{}{}
	e.work.flightMu.Unlock()
	defer e.land(it)
	decision, after, err := passes(ctx, func() error {
		if s.stopped.Load() {
			return nil // its graph stopped meanwhile
		}
		start := time.Now()
		err := s.reconcile(ctx, it)
		e.work.reconciles.Add(1)
		metrics.ReconcileDuration.WithLabelValues(s.resource).Observe(time.Since(start).Seconds())
		if d, _ := requeue.Decide(err); d == requeue.Immediately {
			metrics.ReconcileTotal.WithLabelValues(s.resource, "requeue").Inc()
		}
		return err
	})
	e.work.end()
	e.settle(it, s.resource, decision, after, err)
	if decision == requeue.RateLimited && !apierrors.IsNotFound(err) {
		e.noteRetry(s, it)
	}
	return true
}

// settle puts it back in the queue as the reconcile's decision says.
func (e *Engine) settle(it item, resource string, decision requeue.Decision, after time.Duration, err error) {
	if decision == requeue.RateLimited && apierrors.IsNotFound(err) {
		decision = requeue.Forget
	}
	result := "success"
	switch decision {
	case requeue.Forget:
		e.work.queue.Forget(it)
	case requeue.Drop:
		result = "no_requeue"
		e.work.queue.Forget(it)
	case requeue.Immediately:
		result = "requeue"
		if streak := e.immediateStreak(it, true); streak <= immediateRounds {
			e.work.queue.Forget(it)
			e.work.queue.Add(it)
		} else {
			// Every pass asks again (something keeps deleting what it
			// creates, or another writer undoes it): back off as for an
			// error instead of spinning a worker and the API server.
			if streak == immediateRounds+1 {
				e.log.Info("instance asks for an immediate requeue on every pass (does something keep deleting what it creates?): rate-limited",
					"instance", it.String(), "lastError", fmt.Sprint(err))
			}
			e.work.queue.AddRateLimited(it)
		}
	case requeue.Later:
		result = "requeue_after"
		e.work.queue.Forget(it)
		e.work.queue.AddAfter(it, after)
	case requeue.RateLimited:
		// Retried with capped per-item backoff, never dropped; the
		// reconciler reported the ERROR state to the observer.
		result = "error"
		e.work.queue.AddRateLimited(it)
	}
	if decision != requeue.Immediately {
		metrics.ReconcileTotal.WithLabelValues(resource, result).Inc()
		e.immediateStreak(it, false)
	}
}

// immediateRounds is how many queue rounds in a row (each of up to
// immediatePasses passes) an instance may ask for an immediate requeue
// before its requeues are rate-limited.
const immediateRounds = 5

// immediateStreak counts the rounds in a row it asked for an immediate
// requeue (asked: one more; otherwise the count is cleared) and returns
// the count.
func (e *Engine) immediateStreak(it item, asked bool) int {
	e.work.flightMu.Lock()
	defer e.work.flightMu.Unlock()
	if !asked {
		delete(e.work.streaks, it)
		return 0
	}
	if e.work.streaks == nil {
		e.work.streaks = map[item]int{}
	}
	e.work.streaks[it]++
	return e.work.streaks[it]
}

// noteRetry records the backoff the queue chose for a failed instance in
// its error memory and its resources', so the screen can say when the next
// attempt comes.
func (e *Engine) noteRetry(s *served, it item) {
	d, ok := e.work.limiter.last(it)
	key := state.InstanceKey{Resource: s.resource, Namespace: it.namespace, Name: it.name}
	if !ok || e.store.Instance(key) == nil {
		return
	}
	now := time.Now()
	e.store.UpdateExisting(key, func(in *state.Instance) {
		in.LastError = in.LastError.WithRetry(d, now)
		if in.Resources == nil {
			return
		}
		rs := make([]state.Resource, len(in.Resources))
		copy(rs, in.Resources)
		for i := range rs {
			rs[i].LastError = rs[i].LastError.WithRetry(d, now)
		}
		in.Resources = rs
	})
}

// recordingLimiter remembers the last delay it gave each item, which the
// work queue does not expose.
type recordingLimiter struct {
	workqueue.TypedRateLimiter[item]
	mu    sync.Mutex
	delay map[item]time.Duration
}

func newRecordingLimiter(l workqueue.TypedRateLimiter[item]) *recordingLimiter {
	return &recordingLimiter{TypedRateLimiter: l, delay: map[item]time.Duration{}}
}

func (r *recordingLimiter) When(it item) time.Duration {
	d := r.TypedRateLimiter.When(it)
	r.mu.Lock()
	r.delay[it] = d
	r.mu.Unlock()
	return d
}

func (r *recordingLimiter) Forget(it item) {
	r.TypedRateLimiter.Forget(it)
	r.mu.Lock()
	delete(r.delay, it)
	r.mu.Unlock()
}

func (r *recordingLimiter) last(it item) (time.Duration, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d, ok := r.delay[it]
	return d, ok
}

// passes runs reconcile again at once while it asks for an immediate
// requeue (it waits only for its own writes, or lost a race), at most
// immediatePasses times, and returns the last outcome. The worker still
// holds the item meanwhile: at the back of the queue the instance would
// wait for every other one, and a rollout would finish every instance at
// its end instead of each as soon as it can.
func passes(ctx context.Context, reconcile func() error) (requeue.Decision, time.Duration, error) {
	for pass := 1; ; pass++ {
		err := reconcile()
		decision, after := requeue.Decide(err)
		if decision != requeue.Immediately || pass >= immediatePasses || ctx.Err() != nil {
			return decision, after, err
		}
	}
}

// reconcile runs the controller, turning a panic into an error (and an
// ERROR state) so one bad instance cannot stop a worker.
func (s *served) reconcile(ctx context.Context, it item) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("reconcile panicked: %v", p)
			s.e.log.Error(err, "reconcile panicked", "instance", it.namespace+"/"+it.name)
			key := state.InstanceKey{Resource: s.resource, Namespace: it.namespace, Name: it.name}
			s.e.store.UpdateExisting(key, func(in *state.Instance) {
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

// enqueue adds an instance of s now (watch events are not rate limited).
func (e *Engine) enqueue(s *served, namespace, name string) {
	e.work.queue.Add(item{gvr: s.gvr, namespace: namespace, name: name})
}

// enqueueAll adds every cached instance of s (optionally of one namespace).
func (e *Engine) enqueueAll(s *served, namespace ...string) int {
	if s.inf == nil {
		return 0
	}
	n := 0
	for _, k := range s.inf.GetIndexer().ListKeys() {
		ns, name, err := cache.SplitMetaNamespaceKey(k)
		if err != nil || (len(namespace) > 0 && ns != namespace[0]) {
			continue
		}
		e.enqueue(s, ns, name)
		n++
	}
	return n
}

// routeWatchEvent wakes the instances a child or external event concerns.
func (e *Engine) routeWatchEvent(ev watch.Event) {
	if ev.Spec.ExternalSelector {
		e.routeSelected(ev)
		return
	}
	if ev.Spec.FieldSelector != "" {
		for s := range e.graphs.each() {
			for _, ref := range s.external {
				if ref.gvr != ev.Spec.GVR || ref.name != ev.Name {
					continue
				}
				if ref.namespace == "" {
					e.enqueueAll(s, ev.Namespace) // instances in the object's namespace read it
				} else if ref.namespace == ev.Namespace {
					e.enqueueAll(s)
				}
			}
		}
		return
	}
	e.routeChild(ev.Spec.GVR, ev.Labels, &ev)
	if ev.OldLabels != nil && ev.OldLabels[metadata.InstanceIDLabel] != ev.Labels[metadata.InstanceIDLabel] {
		e.routeChild(ev.Spec.GVR, ev.OldLabels, nil) // it left its instance: tell the old one too
	}
}

// wakeForChild queues it for a child event ev (nil: wake it regardless),
// unless ev is only the echo of a create by a reconcile of it. An event that comes while a worker holds it is held
// until that reconcile ends, and checked then: the watch often shows a
// child before the apply that made it has returned (a metadata-only event
// decodes faster than the full object), and every new instance was
// reconciled a second time for its own creates.
func (e *Engine) wakeForChild(it item, ev *watch.Event) {
	if ev != nil {
		if e.ownWriteEcho(*ev) {
			return
		}
		e.work.flightMu.Lock()
		if _, held := e.work.flying[it]; held {
			if e.work.held == nil {
				e.work.held = map[item][]watch.Event{}
			}
			e.work.held[it] = append(e.work.held[it], *ev)
			e.work.flightMu.Unlock()
			return
		}
		e.work.flightMu.Unlock()
	}
	e.work.queue.Add(it)
}

// land ends a worker's hold on it: the child events that came meanwhile
// queue it again unless the reconcile had seen exactly what they show. It
// runs before the queue's Done, so a queued item is reconciled after this
// one, as an Add during the reconcile would be.
func (e *Engine) land(it item) {
	e.work.flightMu.Lock()
	delete(e.work.flying, it)
	evs := e.work.held[it]
	delete(e.work.held, it)
	e.work.flightMu.Unlock()
	for _, ev := range evs {
		if !e.ownWriteEcho(ev) {
			e.work.queue.Add(it)
			return
		}
	}
}

// ownWriteEcho reports whether ev is a child's add event showing exactly
// the version that the API server returned to a reconcile (its create):
// that reconcile has acted on it already (a pass concludes over what it
// created, or asks for its own next pass), and waking the instance again
// would only find what it left. Updates are not filtered: a pass that
// UPDATED a child leaves the instance IN_PROGRESS and counts on the
// update's event for the pass that sees it SYNCED.
func (e *Engine) ownWriteEcho(ev watch.Event) bool {
	if ev.Type != "add" || ev.ResourceVersion == "" || e.reader == nil {
		return false
	}
	return e.reader.holds(ev.Spec.GVR, ev.Namespace, ev.Name, ev.UID, ev.ResourceVersion)
}

// routeSelected wakes every instance of the graphs whose external
// collection the object belongs to, or belonged to before an update (its
// labels left the selector).
func (e *Engine) routeSelected(ev watch.Event) {
	for s := range e.graphs.each() {
		for _, sel := range s.selectors {
			if sel.gvr != ev.Spec.GVR || (sel.namespace != "" && sel.namespace != ev.Namespace) {
				continue
			}
			if sel.selector.Matches(labels.Set(ev.Labels)) || (ev.OldLabels != nil && sel.selector.Matches(labels.Set(ev.OldLabels))) {
				e.enqueueAll(s)
				break
			}
		}
	}
}

// routeChild wakes the instance whose labels the child carries, in every
// graph that has children of that kind, when the instance's UID matches
// (ev is the child's event, nil to wake it in any case).
func (e *Engine) routeChild(gvr schema.GroupVersionResource, labels map[string]string, ev *watch.Event) {
	uid := labels[metadata.InstanceIDLabel]
	name := labels[metadata.InstanceNameLabel]
	if uid == "" || name == "" {
		return
	}
	ns := labels[metadata.InstanceNamespaceLabel]
	key := name
	if ns != "" {
		key = ns + "/" + name
	}
	for s := range e.graphs.each() {
		if !s.children[gvr] || s.inf == nil {
			continue
		}
		obj, ok, err := s.inf.GetIndexer().GetByKey(key)
		if err != nil || !ok {
			continue
		}
		if m := watch.MetaOf(obj); m != nil && string(m.GetUID()) == uid {
			e.wakeForChild(item{gvr: s.gvr, namespace: ns, name: name}, ev)
		}
	}
}

// requeueLocal puts the instance at the head of this engine's queue.
func (e *Engine) requeueLocal(s *served, key state.InstanceKey) {
	it := item{gvr: s.gvr, namespace: key.Namespace, name: key.Name}
	e.work.queue.Forget(it)
	e.work.queue.Add(it)
}

// setUp makes the rate-limited queue.
func (w *workQueue) setUp() {
	w.limiter = newRecordingLimiter(workqueue.NewTypedMaxOfRateLimiter(
		// Per instance: 100ms, doubling, capped so a failing instance is
		// retried at least every two minutes and never dropped.
		workqueue.NewTypedItemExponentialFailureRateLimiter[item](100*time.Millisecond, 2*time.Minute),
		// Overall: bounds the retry storm after an outage; watch events
		// use Add and are not slowed by it.
		&workqueue.TypedBucketRateLimiter[item]{Limiter: rate.NewLimiter(rate.Limit(50), 300)},
	))
	w.queue = workqueue.NewTypedRateLimitingQueueWithConfig[item](w.limiter,
		workqueue.TypedRateLimitingQueueConfig[item]{Name: "kroscope"},
	)
}

// shutDown stops handing out items; busyWorkers counts the workers
// reconciling now.
func (w *workQueue) shutDown()          { w.queue.ShutDown() }
func (w *workQueue) busyWorkers() int64 { return w.busy.Load() }

// begin counts a worker busy and raises the peak.
func (w *workQueue) begin() {
	n := w.busy.Add(1)
	for p := w.peak.Load(); n > p && !w.peak.CompareAndSwap(p, n); p = w.peak.Load() {
	}
}

// end counts a worker idle again; the peak keeps it until the next sample.
func (w *workQueue) end() { w.busy.Add(-1) }

// sampleBusy is the most workers busy at once since the previous sample,
// and starts the next interval at those busy now. Reading busy alone, a
// sample every half second almost never caught a reconcile of a few
// milliseconds: the header said idle during a rollout of 16 reconciles a
// second.
func (w *workQueue) sampleBusy() int64 { return max(w.peak.Swap(w.busy.Load()), w.busy.Load()) }

// add queues it; forget drops its backoff.
func (w *workQueue) add(it item)    { w.queue.Add(it) }
func (w *workQueue) forget(it item) { w.queue.Forget(it) }

// inFlight names the instances being reconciled now, sorted.
func (e *Engine) inFlight() []string {
	e.work.flightMu.Lock()
	defer e.work.flightMu.Unlock()
	out := make([]string, 0, len(e.work.flying))
	for it := range e.work.flying {
		out = append(out, it.String())
	}
	sort.Strings(out)
	return out
}
