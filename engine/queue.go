package engine

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"

	"github.com/kroscope/kroscope/engine/metrics"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/engine/watch"
	"github.com/kroscope/kroscope/reconciler/requeue"
)

// workQueue decides when each instance is reconciled: the rate-limited
// queue (client-go's sample-controller's shape: handlers add, workers get,
// reconcile, then forget or add again), the workers' holds on their items,
// and what a reconcile's outcome does to its item.
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

	table *graphTable // the graph each item's kind is served by
	store *state.Store
	log   logr.Logger
	// echoes reports whether a child's event only shows what a reconcile
	// wrote (reader.echoes).
	echoes func(watch.Event) bool
}

// item is one instance to reconcile.
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
func (w *workQueue) processNext(ctx context.Context) bool {
	it, shutdown := w.queue.Get()
	if shutdown {
		return false
	}
	defer w.queue.Done(it)
	s := w.table.of(it.gvr)
	if s == nil {
		w.queue.Forget(it) // its graph stopped
		return true
	}
	w.begin()
	w.flightMu.Lock()
	if w.flying == nil {
		w.flying = map[item]struct{}{}
	}
	w.flying[it] = struct{}{}
	w.flightMu.Unlock()
	defer w.land(it)
	decision, after, err := passes(ctx, func() error {
		if s.stopped.Load() {
			return nil // its graph stopped meanwhile
		}
		start := time.Now()
		err := s.reconcile(ctx, it)
		w.reconciles.Add(1)
		metrics.ReconcileDuration.WithLabelValues(s.resource).Observe(time.Since(start).Seconds())
		if d, _ := requeue.Decide(err); d == requeue.Immediately {
			metrics.ReconcileTotal.WithLabelValues(s.resource, "requeue").Inc()
		}
		return err
	})
	w.end()
	w.settle(it, s.resource, decision, after, err)
	if decision == requeue.RateLimited && !apierrors.IsNotFound(err) {
		w.noteRetry(s, it)
	}
	return true
}

// settle puts it back in the queue as the reconcile's decision says.
func (w *workQueue) settle(it item, resource string, decision requeue.Decision, after time.Duration, err error) {
	if decision == requeue.RateLimited && apierrors.IsNotFound(err) {
		decision = requeue.Forget
	}
	result := "success"
	switch decision {
	case requeue.Forget:
		w.queue.Forget(it)
	case requeue.Drop:
		result = "no_requeue"
		w.queue.Forget(it)
	case requeue.Immediately:
		result = "requeue"
		if streak := w.immediateStreak(it, true); streak <= immediateRounds {
			w.queue.Forget(it)
			w.queue.Add(it)
		} else {
			// Every pass asks again (something keeps deleting what it
			// creates, or another writer undoes it): back off as for an
			// error instead of spinning a worker and the API server.
			if streak == immediateRounds+1 {
				w.log.Info("instance asks for an immediate requeue on every pass (does something keep deleting what it creates?): rate-limited",
					"instance", it.String(), "lastError", fmt.Sprint(err))
			}
			w.queue.AddRateLimited(it)
		}
	case requeue.Later:
		result = "requeue_after"
		w.queue.Forget(it)
		w.queue.AddAfter(it, after)
	case requeue.RateLimited:
		// Retried with capped per-item backoff, never dropped; the
		// reconciler reported the ERROR state to the observer.
		result = "error"
		w.queue.AddRateLimited(it)
	}
	if decision != requeue.Immediately {
		metrics.ReconcileTotal.WithLabelValues(resource, result).Inc()
		w.immediateStreak(it, false)
	}
}

// immediateRounds is how many queue rounds in a row (each of up to
// immediatePasses passes) an instance may ask for an immediate requeue
// before its requeues are rate-limited.
const immediateRounds = 5

// immediateStreak counts the rounds in a row it asked for an immediate
// requeue (asked: one more; otherwise the count is cleared) and returns
// the count.
func (w *workQueue) immediateStreak(it item, asked bool) int {
	w.flightMu.Lock()
	defer w.flightMu.Unlock()
	if !asked {
		delete(w.streaks, it)
		return 0
	}
	if w.streaks == nil {
		w.streaks = map[item]int{}
	}
	w.streaks[it]++
	return w.streaks[it]
}

// noteRetry records the backoff the queue chose for a failed instance in
// its error memory and its resources', so the screen can say when the next
// attempt comes.
func (w *workQueue) noteRetry(s *served, it item) {
	d, ok := w.limiter.last(it)
	key := state.InstanceKey{Resource: s.resource, Namespace: it.namespace, Name: it.name}
	if !ok || w.store.Instance(key) == nil {
		return
	}
	now := time.Now()
	w.store.UpdateExisting(key, func(in *state.Instance) {
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

func newWorkQueue(table *graphTable, store *state.Store, log logr.Logger, echoes func(watch.Event) bool) *workQueue {
	w := &workQueue{table: table, store: store, log: log, echoes: echoes}
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
	return w
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

// add queues it (watch events are not rate limited); forget drops its
// backoff; addNow puts it at the head of the queue (a user's requeue).
func (w *workQueue) add(it item)    { w.queue.Add(it) }
func (w *workQueue) forget(it item) { w.queue.Forget(it) }
func (w *workQueue) addNow(it item) {
	w.queue.Forget(it)
	w.queue.Add(it)
}

// reconciled counts the reconciles done; depth the items waiting.
func (w *workQueue) reconciled() int64 { return w.reconciles.Load() }
func (w *workQueue) depth() int        { return w.queue.Len() }

// wakeForChild queues it for a child event ev (nil: wake it regardless),
// unless ev is only the echo of a create by a reconcile of it. An event
// that comes while a worker holds it is held until that reconcile ends,
// and checked then: the watch often shows a child before the apply that
// made it has returned (a metadata-only event decodes faster than the
// full object), and every new instance was reconciled a second time for
// its own creates.
func (w *workQueue) wakeForChild(it item, ev *watch.Event) {
	if ev != nil {
		if w.echoes(*ev) {
			return
		}
		w.flightMu.Lock()
		if _, held := w.flying[it]; held {
			if w.held == nil {
				w.held = map[item][]watch.Event{}
			}
			w.held[it] = append(w.held[it], *ev)
			w.flightMu.Unlock()
			return
		}
		w.flightMu.Unlock()
	}
	w.queue.Add(it)
}

// land ends a worker's hold on it: the child events that came meanwhile
// queue it again unless the reconcile had seen exactly what they show. It
// runs before the queue's Done, so a queued item is reconciled after this
// one, as an Add during the reconcile would be.
func (w *workQueue) land(it item) {
	w.flightMu.Lock()
	delete(w.flying, it)
	evs := w.held[it]
	delete(w.held, it)
	w.flightMu.Unlock()
	for _, ev := range evs {
		if !w.echoes(ev) {
			w.queue.Add(it)
			return
		}
	}
}

// inFlight names the instances being reconciled now, sorted.
func (w *workQueue) inFlight() []string {
	w.flightMu.Lock()
	defer w.flightMu.Unlock()
	out := make([]string, 0, len(w.flying))
	for it := range w.flying {
		out = append(out, it.String())
	}
	sort.Strings(out)
	return out
}
