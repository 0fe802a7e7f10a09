// Command benchengine runs kroscope's engine for the engine benchmark
// (test/bench) in a process of its own, so that the benchmark can read the
// engine's CPU time and peak RSS from the operating system without the
// benchmark's own client work in them.
//
// It talks to the benchmark through lines of JSON on stdout and stdin:
//
//	{"event":"ready","resource":"..."}  the graph is served and the lease held
//	go                                  (stdin) start counting requests
//	{"event":"counting"}
//	{"event":"active",...}              -n instances are ACTIVE: their times and the request counts
//	{"event":"idle",...}                the requests of the next -idle, and the process's peak RSS
//
// It then stops the engine and exits. With -restart it creates nothing and
// waits for nothing on stdin: see restart.go.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/internal/residency"
	// As in cmd/kroscope: the binary's pages released while it initialises.
	_ "github.com/kroscope/kroscope/internal/residency/early"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/client"
)

// Active is the "active" message.
type Active struct {
	Event string `json:"event"`
	// ActiveAt is when each instance (by name) first became ACTIVE, in
	// Unix nanoseconds, from the state's own transition times.
	ActiveAt map[string]int64 `json:"activeAt"`
	// Histories are each instance's transitions, with -histories.
	Histories  map[string][]Transition `json:"histories,omitempty"`
	Reconciles int64                   `json:"reconciles"`
	Workers    int                     `json:"workers"`
	Counts     Counts                  `json:"counts"`
	// HeapInuse is the live heap after a GC, once converged.
	HeapInuse  uint64 `json:"heapInuse"`
	Goroutines int    `json:"goroutines"`
	// MeanBusy and MeanQueue are the busy workers and the queue depth,
	// averaged over the engine's samples (about once a second) while the
	// instances converged.
	MeanBusy  float64 `json:"meanBusy"`
	MeanQueue float64 `json:"meanQueue"`
	// CPU is the process's CPU time (user+system, ns) from the first
	// create to all ACTIVE: the convergence's, without start-up or idle.
	CPU int64 `json:"cpu"`
	// Template is what the engine sent for the instance -template: the
	// requests the benchmark's floor replays for every instance.
	Template []Request `json:"template"`
}

// Transition is one state change of an instance.
type Transition struct {
	To      string `json:"to"`
	At      int64  `json:"at"` // Unix nanoseconds
	Message string `json:"message"`
}

// Idle is the "idle" message.
type Idle struct {
	Event  string `json:"event"`
	Counts Counts `json:"counts"`
	// VmHWM is the peak resident set size in KiB (/proc/self/status).
	VmHWM int64 `json:"vmHWM"`
	// PeakAnon and PeakFile are the highest anonymous and file-backed
	// resident sizes sampled (KiB): the runtime's memory, and the binary's
	// pages.
	PeakAnon int64 `json:"peakAnon"`
	PeakFile int64 `json:"peakFile"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "benchengine:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		kubeconfig = flag.String("api-kubeconfig", "", "kubeconfig of the API server")
		rgd        = flag.String("rgd", "", "the graph's file")
		leaseNS    = flag.String("lease-namespace", "", "namespace of the engine's Lease")
		n          = flag.Int("n", 0, "instances to wait for")
		workers    = flag.Int("workers", 0, "reconcile workers (0: the engine's default)")
		idle       = flag.Duration("idle", 30*time.Second, "how long to count requests once converged")
		heapDir    = flag.String("heap-profile", "", "folder for heap profiles (heap-N<n>.pprof once converged)")
		cpuProf    = flag.String("cpu-profile", "", "file for a CPU profile from the first create to all ACTIVE")
		histories  = flag.Bool("histories", false, "send every instance's transitions")
		timeout    = flag.Duration("timeout", 10*time.Minute, "give up waiting for the instances")
		template   = flag.String("template", "", "record the requests for this instance and its children")
		restart    = flag.Bool("restart", false, "the -n instances exist: create nothing, report when this process has verified them all (see restart.go)")
		window     = flag.Duration("window", time.Minute, "with -restart: how long from the process's start to count requests")
	)
	flag.Parse()
	rssCtx, stopRSS := context.WithCancel(context.Background())
	defer stopRSS()
	rss := startRSSSampler(rssCtx, 20*time.Millisecond)
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 0, 0 // the engine's defaults
	c := &counter{}
	if *template != "" {
		c.tmpl = &templateRecorder{name: *template}
	}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { c.next = rt; return c })
	set, err := client.NewSet(cfg)
	if err != nil {
		return err
	}
	e, err := engine.New(engine.Options{ClientSet: set, RGDPaths: []string{*rgd}, LeaseNamespace: *leaseNS, Log: logr.Discard(), Workers: *workers})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	defer func() { cancel(); <-done }()
	out := json.NewEncoder(os.Stdout)
	if *restart {
		return runRestart(e, c, out, restartOpts{n: *n, window: *window, timeout: *timeout, cpuProf: *cpuProf})
	}

	var g state.Graph
	if err := wait(e, 2*time.Minute, "graph served and lease held", func(s *state.Snapshot) bool {
		for _, x := range s.Graphs {
			if x.Served {
				g = x
			}
		}
		return g.Served && s.Mode.Reconciling
	}); err != nil {
		return err
	}
	// As kroscope's long-running commands do once the engine is ready.
	residency.Release()
	if err := out.Encode(map[string]string{"event": "ready", "resource": g.Resource}); err != nil {
		return err
	}
	if line, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil || strings.TrimSpace(line) != "go" {
		return fmt.Errorf("expected \"go\" on stdin, got %q (%v)", line, err)
	}
	c.take()
	cpu0 := processCPU()
	if *cpuProf != "" {
		f, err := os.Create(*cpuProf)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	if err := out.Encode(map[string]string{"event": "counting"}); err != nil {
		return err
	}

	var snap *state.Snapshot
	var samples, busy, queued int
	if err := wait(e, *timeout, fmt.Sprintf("%d instances ACTIVE", *n), func(s *state.Snapshot) bool {
		snap = s
		samples++
		busy += s.Engine.BusyWorkers
		queued += s.Engine.QueueDepth
		k := 0
		for _, in := range s.Instances {
			if in.State == reconciler.InstanceStateActive {
				k++
			}
		}
		return k == *n
	}); err != nil {
		return err
	}
	counts := c.take()
	cpu := processCPU() - cpu0
	if *cpuProf != "" {
		pprof.StopCPUProfile()
	}
	a := Active{Event: "active", ActiveAt: map[string]int64{}, Reconciles: snap.Engine.Reconciles, Workers: snap.Engine.Workers, Counts: counts,
		MeanBusy: float64(busy) / float64(samples), MeanQueue: float64(queued) / float64(samples), CPU: int64(cpu)}
	if c.tmpl != nil {
		a.Template = c.tmpl.take()
	}
	for _, in := range snap.Instances {
		for _, t := range in.History {
			if t.To == reconciler.InstanceStateActive {
				a.ActiveAt[in.Key.Name] = t.At.UnixNano()
				break
			}
		}
		if *histories {
			if a.Histories == nil {
				a.Histories = map[string][]Transition{}
			}
			for _, t := range in.History {
				a.Histories[in.Key.Name] = append(a.Histories[in.Key.Name], Transition{To: t.To, At: t.At.UnixNano(), Message: t.Message})
			}
		}
	}
	snap = nil
	// Twice: the heap profile counts what was allocated during the last
	// cycle (by reconciles still running) as live until the next one.
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	a.HeapInuse = ms.HeapInuse
	a.Goroutines = runtime.NumGoroutine()
	if *heapDir != "" {
		if err := writeProfile("goroutine", filepath.Join(*heapDir, fmt.Sprintf("goroutine-N%d.txt", *n)), 1); err != nil {
			return err
		}
	}
	if *heapDir != "" {
		if err := writeProfile("heap", filepath.Join(*heapDir, fmt.Sprintf("heap-N%d.pprof", *n)), 0); err != nil {
			return err
		}
	}
	if err := out.Encode(a); err != nil {
		return err
	}

	time.Sleep(*idle)
	anon, file := rss.peaks()
	return out.Encode(Idle{Event: "idle", Counts: c.take(), VmHWM: vmHWM(), PeakAnon: anon, PeakFile: file})
}

// processCPU is this process's CPU time so far, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func writeProfile(name, path string, debug int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup(name).WriteTo(f, debug); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// wait polls the engine's state every 100 ms until cond holds. The times
// reported come from the state's own transition timestamps, so polling
// does not blur them.
func wait(e *engine.Engine, timeout time.Duration, what string, cond func(*state.Snapshot) bool) error {
	deadline := time.Now().Add(timeout)
	for {
		if cond(e.Snapshot()) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
