package engine

import (
	"fmt"
	"sync/atomic"
	"time"
)

// Liveness and readiness, as the probes of a Pod (kroscope run
// --health-probe-bind-address) ask for them.
const (
	// StallAfter is how long the engine's heartbeat (the counters loop,
	// every 500ms, through the graph table's lock and the state store's) may be
	// silent before the engine counts as wedged: a deadlock, not a slow
	// API server, which delays reconciles but not the heartbeat.
	StallAfter = 30 * time.Second
	// WedgedAfter is how long every worker may be busy without one
	// reconcile finishing. Each reconcile's API calls and CEL evaluations
	// are bounded, so minutes without progress mean workers are stuck.
	WedgedAfter = 5 * time.Minute
)

// health decides whether the engine is alive: the counters loop's
// heartbeat and the workers' progress, for Healthy.
type health struct {
	// beat is the last heartbeat (UnixNano); progress the last time the
	// reconcile count moved or a worker was free.
	beat, progress atomic.Int64
	lastCount      atomic.Int64
	// alive takes and releases the graph table's lock: a deadlock on it
	// stops the heartbeat.
	alive   func()
	busy    func() int64 // the workers reconciling now
	workers int
}

func newHealth(alive func(), busy func() int64, workers int) *health {
	return &health{alive: alive, busy: busy, workers: workers}
}

// start marks the start of Run: the heartbeat counts from now.
func (h *health) start(now time.Time) {
	h.beat.Store(now.UnixNano())
	h.progress.Store(now.UnixNano())
}

// heartbeat runs on every counters tick. It takes the graph table's lock,
// so a deadlock on it stops the heartbeat, and Healthy says so.
func (h *health) heartbeat(now time.Time, reconciles int64) {
	h.alive()
	if reconciles != h.lastCount.Swap(reconciles) || h.busy() < int64(h.workers) {
		h.progress.Store(now.UnixNano())
	}
	h.beat.Store(now.UnixNano())
}

// check reports a stalled heartbeat or wedged workers.
func (h *health) check(now time.Time) error {
	if beat := time.Unix(0, h.beat.Load()); now.Sub(beat) > StallAfter {
		return fmt.Errorf("engine loop stalled: no heartbeat for %s", now.Sub(beat).Round(time.Second))
	}
	if p := time.Unix(0, h.progress.Load()); now.Sub(p) > WedgedAfter {
		return fmt.Errorf("workers wedged: all %d busy and no reconcile finished for %s", h.workers, now.Sub(p).Round(time.Second))
	}
	return nil
}

// Healthy reports whether the engine is alive: Run has not failed, its
// heartbeat is recent and its workers are not all stuck. It is what
// /healthz serves (a failing liveness probe restarts the Pod).
func (e *Engine) Healthy(now time.Time) error {
	if f := e.store.Snapshot().Fatal; f != nil {
		return fmt.Errorf("engine stopped: %s", f.Title)
	}
	if !e.running.Load() {
		return nil // not started yet: nothing can be wedged
	}
	return e.health.check(now)
}

// Ready reports whether the engine serves: startup is over (every initial
// graph is served or has failed) and every watch has synced. Holding the
// Lease is not required: a standby replica is healthy and waiting, and
// takes over from its synced caches. It is what /readyz serves.
func (e *Engine) Ready() error {
	snap := e.store.Snapshot()
	if snap.Fatal != nil {
		return fmt.Errorf("engine stopped: %s", snap.Fatal.Title)
	}
	if !snap.Startup.Done {
		phase := snap.Startup.Phase
		if phase == "" {
			phase = "starting"
		}
		return fmt.Errorf("starting: %s", phase)
	}
	for _, w := range snap.Watches {
		// A forbidden watch never syncs. It is reported (log, header,
		// metrics) and retried quietly; holding readiness back for it would
		// leave both replicas unready and stall every rollout over one
		// missing grant.
		if !w.Synced && !w.Forbidden {
			return fmt.Errorf("watch %s not synced", w.Name)
		}
	}
	return nil
}
