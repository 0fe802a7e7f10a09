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

// figures are the engine's figures as the state store shows them (twice a
// second): queue depth, the most reconciles in flight since the last
// figures and the process's memory. It
// sets the matching gauges of --metrics-bind-address too, so the UI and a
// scrape agree.
func (w *workQueue) figures(workers int, apiErrors, reconciles int64, rps float64) state.Engine {
	s := state.Engine{
		Workers:             workers,
		BusyWorkers:         int(w.sampleBusy()),
		QueueDepth:          w.depth(),
		Reconciles:          reconciles,
		ReconcilesPerSecond: rps,
		APIErrors:           apiErrors,
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

// counters reads the reconcile count (count) every half second, beats
// the heartbeat with it and publishes it with the reconcile rate over the
// last few seconds.
func counters(ctx context.Context, count func() int64, beat func(time.Time, int64), publish func(n int64, rps float64)) {
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
			n := count()
			beat(now, n)
			samples = append(samples, sample{now, n})
			if len(samples) > window {
				samples = samples[1:]
			}
			rps := 0.0
			if first := samples[0]; len(samples) > 1 {
				rps = float64(n-first.n) / now.Sub(first.at).Seconds()
			}
			publish(n, rps)
		}
	}
}
