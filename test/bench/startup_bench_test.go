//go:build bench

package bench

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/kroscope/kroscope/test/envtest"
)

// BenchmarkEngineStartup is the engine starting on a cluster that already
// holds N ACTIVE instances of the three-ConfigMap chain (BENCH_STARTUP_N,
// default 10,000): what a restart costs. A first benchengine creates and
// converges them and exits; a second starts fresh against them. Reported:
// the time from its exec to its first full snapshot (every instance in the
// state store, ACTIVE), split at "graph served and lease held", and its
// peak RSS (VmHWM), which the informers' initial lists (or, from client-go
// v0.35 on, streaming watch-lists) of the instances and their children set.
func BenchmarkEngineStartup(b *testing.B) {
	n := 10000
	if v := os.Getenv("BENCH_STARTUP_N"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("BENCH_STARTUP_N: %q is not an instance count", v)
		}
	}
	engineBin := buildEngine(b)
	b.Setenv("BENCH_IDLE", "1s") // the idle phase is the convergence benchmark's
	b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
		for range b.N {
			env := envtest.Start(b)
			r := &chainRun{n: n, ns: env.Namespace(b), kind: fmt.Sprintf("BenchStart%d", n)}
			first := r.startEngine(b, env, engineBin, workers())
			r.createInstances(b, env)
			first.next(b, &r.active)
			first.next(b, &r.idle)
			_ = first.in.Close()
			if err := first.cmd.Wait(); err != nil {
				b.Fatalf("benchengine (converging): %v (stderr: %s)", err, first.stderr.String())
			}
			b.ResetTimer()
			start := time.Now()
			second := r.startEngine(b, env, engineBin, workers())
			ready := time.Since(start)
			var active activeMsg
			second.next(b, &active)
			full := time.Since(start)
			b.StopTimer()
			var idle idleMsg
			second.next(b, &idle)
			_ = second.in.Close()
			if err := second.cmd.Wait(); err != nil {
				b.Fatalf("benchengine (restarted): %v (stderr: %s)", err, second.stderr.String())
			}
			b.ReportMetric(full.Seconds(), "s-to-full-snapshot")
			b.ReportMetric(float64(idle.VmHWM)/1024, "MiB-peak-RSS")
			b.Logf("N=%d restart: graph served and lease held after %s, first full snapshot (all %d ACTIVE) after %s; peak RSS %.1f MiB (VmHWM), %d requests besides Events and the Lease",
				n, ready.Round(time.Millisecond), n, full.Round(time.Millisecond), float64(idle.VmHWM)/1024, active.Counts.Reads+active.Counts.Other)
		}
	})
}
