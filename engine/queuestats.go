package engine

import (
	"context"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"

	kmetrics "github.com/kroscope/kroscope/engine/metrics"
	"github.com/kroscope/kroscope/engine/state"
)

// queueStats is the engine's figures as the state store shows them (twice a
// second): queue depth, the most reconciles in flight since the last
// figures and the process's memory. It
// sets the matching gauges of --metrics-bind-address too, so the UI and a
// scrape agree.
func (e *Engine) queueStats(reconciles int64, rps float64) state.Engine {
	s := state.Engine{
		Workers:             e.o.Workers,
		BusyWorkers:         int(e.work.sampleBusy()),
		QueueDepth:          e.work.queue.Len(),
		Reconciles:          reconciles,
		ReconcilesPerSecond: rps,
		APIErrors:           e.cl.apiErrors.Load(),
		HeapInUse:           heapInUse(),
		RSS:                 residentBytes(),
	}
	kmetrics.QueueDepth.Set(float64(s.QueueDepth))
	kmetrics.InFlight.Set(float64(s.BusyWorkers))
	return s
}

// heapInUse reads the bytes of live and not yet swept heap objects without
// stopping the world (runtime.ReadMemStats would).
func heapInUse() uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return sample[0].Value.Uint64()
}

// residentBytes is the process's resident set size from /proc (Linux); 0
// elsewhere.
func residentBytes() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * uint64(os.Getpagesize())
}

// counters publishes queue depth, busy workers and the reconcile rate
// (over the last few seconds).
func (e *Engine) counters(ctx context.Context) {
	type sample struct {
		at time.Time
		n  int64
	}
	const window = 10
	samples := make([]sample, 0, window+1)
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			n := e.work.reconciles.Load()
			e.heartbeat(now, n)
			samples = append(samples, sample{now, n})
			if len(samples) > window {
				samples = samples[1:]
			}
			rps := 0.0
			if first := samples[0]; len(samples) > 1 {
				rps = float64(n-first.n) / now.Sub(first.at).Seconds()
			}
			e.store.SetEngine(e.queueStats(n, rps))
		}
	}
}
