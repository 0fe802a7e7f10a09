//go:build bench

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kroscope/kroscope/test/envtest"
)

// BenchmarkRestart is issue #40's restart row: N converged instances of
// the chain graph, the controller stopped and started again, and what the
// new process costs over the window that follows (BENCH_RESTART_WINDOW,
// default 60 s, from the new process's start): writes by kind, counted by
// the API server itself (apiserver_request_total), Events, state
// transitions, the API server's and etcd's CPU, and the time until every
// instance has been verified. First kroscope (N=…/kroscope), then kro's
// real controller on its own copy of the graph in the same harness
// (N=…/kro, for N up to BENCH_KRO_MAX, default 2000; BENCH_KRO=0 leaves
// kro out), side by side.
func BenchmarkRestart(b *testing.B) {
	engineBin := buildEngine(b)
	for _, n := range restartRows(b) {
		var eng restartResult
		b.Run(fmt.Sprintf("N=%d/kroscope", n), func(b *testing.B) {
			for range b.N {
				eng = runEngineRestart(b, engineBin, n)
			}
		})
		if !runKro(n) {
			continue
		}
		b.Run(fmt.Sprintf("N=%d/kro", n), func(b *testing.B) {
			for range b.N {
				kro := runKroRestart(b, n)
				if eng.server > 0 && kro.server > 0 {
					x := eng.server.Seconds() / kro.server.Seconds()
					b.ReportMetric(x, "kroscope-apiserver-cpu-x-kro")
					b.Logf("N=%d: API server + etcd CPU over the window after a restart: kroscope %.2f s, kro %.2f s: %.3f× kro's (target ≤ 0.1×)",
						n, eng.server.Seconds(), kro.server.Seconds(), x)
				}
			}
		})
	}
}

// restartRows are BENCH_ROWS, or the two rows.
func restartRows(b *testing.B) []int {
	if os.Getenv("BENCH_ROWS") == "" {
		return []int{2000, 10000}
	}
	return benchRows(b)
}

// runKro says whether kro's row runs at n.
func runKro(n int) bool {
	if os.Getenv("BENCH_KRO") == "0" {
		return false
	}
	limit := 2000
	if v, err := strconv.Atoi(os.Getenv("BENCH_KRO_MAX")); err == nil {
		limit = v
	}
	return n <= limit
}

// restartWindow is how long after the new process's start requests and
// CPU are counted.
func restartWindow() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("BENCH_RESTART_WINDOW")); err == nil && d > 0 {
		return d
	}
	return time.Minute
}

// restartResult is one side's window.
type restartResult struct {
	// server is the API server's and etcd's CPU over the window.
	server time.Duration
}

// serverWindow is what the API server counted and spent over a window.
type serverWindow struct {
	writes      map[string]float64 // Leases and access reviews aside
	leaseWrites float64
	events      float64
	cpu         serverCPUs
}

// serverSince is the API server's view of the window from before to now.
func serverSince(b *testing.B, env *envtest.Env, before envtest.ServerRequests, cpu0 serverCPUs) serverWindow {
	cpu := childCPU(b).sub(cpu0)
	after := env.ServerRequests(b)
	w := serverWindow{writes: after.WritesSince(before, "leases"), cpu: cpu}
	for k, v := range after.WritesSince(before) {
		if _, ok := w.writes[k]; !ok {
			w.leaseWrites += v
		}
	}
	for k, v := range w.writes {
		if strings.HasSuffix(k, " events") {
			w.events += v
		}
	}
	return w
}

func (w serverWindow) total() (n float64) {
	for _, v := range w.writes {
		n += v
	}
	return n
}

// byKind lists the writes as "VERB resource: n", sorted.
func (w serverWindow) byKind() string {
	keys := make([]string, 0, len(w.writes))
	for k := range w.writes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		out = append(out, fmt.Sprintf("%s: %.0f", k, w.writes[k]))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

func (w serverWindow) report(b *testing.B) {
	b.ReportMetric(w.total(), "server-writes")
	b.ReportMetric(w.events, "server-events")
	b.ReportMetric(w.leaseWrites, "server-lease-writes")
	b.ReportMetric((w.cpu.apiServer + w.cpu.etcd).Seconds(), "apiserver-etcd-cpu-s")
}

// verifiedMsg and windowMsg are benchengine's restart messages (see
// benchengine/restart.go).
type verifiedMsg struct {
	Started, Served, Leased, Verified int64
	CPU                               int64
	MeanBusy, MeanQueue               float64
	Workers                           int
	ReconcileP50, ReconcileP99        int64
}

type windowMsg struct {
	Counts           counts
	Reconciles       int64
	Transitions      int
	FirstTransitions []string
	States           map[string]int
	CPU              int64
	VmHWM            int64
}

// runEngineRestart converges n instances under one benchengine, lets it
// exit after a few quiet seconds, and starts another on the same graph
// and Lease with -restart.
func runEngineRestart(b *testing.B, engineBin string, n int) restartResult {
	env := envtest.Start(b)
	w := workers()
	r := &chainRun{n: n, ns: env.Namespace(b), kind: fmt.Sprintf("BenchRestart%d", n), idleFor: 5 * time.Second}
	p := r.startEngine(b, env, engineBin, w)
	defer p.kill()
	r.createInstances(b, env)
	p.next(b, &r.active)
	p.next(b, &r.idle)
	p.wait(b)
	converged := time.Unix(0, slices.Max(mapValues(r.active.ActiveAt))).Sub(r.start)
	b.Logf("N=%d: first process: all ACTIVE %s after the first create; %d writes in the %s before it stopped (Leases aside)",
		n, converged.Round(time.Millisecond), r.idle.Counts.Other+r.idle.Counts.Events, r.idleFor)

	window := restartWindow()
	// The API server's own cost with no controller running, over as long
	// a window: what the restart's figures stand on (BENCH_RESTART_BASELINE=0
	// leaves it out).
	if os.Getenv("BENCH_RESTART_BASELINE") != "0" {
		cpu0 := childCPU(b)
		time.Sleep(window)
		idle := childCPU(b).sub(cpu0)
		b.ReportMetric((idle.apiServer + idle.etcd).Seconds(), "idle-apiserver-etcd-cpu-s")
		b.Logf("N=%d: with no controller running, the API server spent %.2f s and etcd %.2f s of CPU in %s", n, idle.apiServer.Seconds(), idle.etcd.Seconds(), window)
	}
	args := []string{"-api-kubeconfig", r.kubeconfig, "-rgd", r.rgd, "-lease-namespace", r.ns, "-n", strconv.Itoa(n),
		"-workers", strconv.Itoa(w), "-restart", "-window", window.String()}
	// BENCH_CPU_PROFILE=DIR also saves the restarted engine's CPU profile,
	// from its start to every instance verified, as DIR/cpu-restart-N<n>.pprof.
	if d := os.Getenv("BENCH_CPU_PROFILE"); d != "" {
		args = append(args, "-cpu-profile", filepath.Join(d, fmt.Sprintf("cpu-restart-N%d.pprof", n)))
	}
	lat0 := readServerLatency(b, env)
	before, cpu0 := env.ServerRequests(b), childCPU(b)
	b.ResetTimer()
	t0 := time.Now()
	q := startProc(b, engineBin, args)
	defer q.kill()
	var v verifiedMsg
	var win windowMsg
	q.next(b, &v)
	q.next(b, &win)
	b.StopTimer()
	sw := serverSince(b, env, before, cpu0)
	getLat, gets := readServerLatency(b, env).mean(lat0, "GET configmaps")
	q.wait(b)
	since := func(ns int64) time.Duration { return time.Unix(0, ns).Sub(t0) }

	sw.report(b)
	c := win.Counts
	b.ReportMetric(since(v.Verified).Seconds(), "s-to-all-verified")
	b.ReportMetric(float64(c.Other), "kroscope-writes")
	b.ReportMetric(float64(c.Events), "kroscope-events")
	b.ReportMetric(float64(c.Lease), "kroscope-lease-writes")
	b.ReportMetric(float64(win.Transitions), "transitions")
	b.ReportMetric(float64(c.Mix.Get)/float64(n), "get/instance")
	b.ReportMetric(float64(c.Mix.List), "lists")
	b.ReportMetric(time.Duration(win.CPU).Seconds(), "kroscope-cpu-s")
	b.ReportMetric(float64(win.VmHWM)/1024, "kroscope-peak-rss-MiB")
	b.Logf("N=%d: kroscope restarted: main began %s after exec, graph served at %s, Lease held at %s, every instance verified (reconciled once by the new process, ACTIVE) at %s; %d reconciles in the %s window; states at its end %v",
		n, since(v.Started).Round(time.Millisecond), since(v.Served).Round(time.Millisecond), since(v.Leased).Round(time.Millisecond),
		since(v.Verified).Round(time.Millisecond), win.Reconciles, window, win.States)
	b.Logf("N=%d: the API server counted %.0f writes besides Leases and access reviews (%s), %.0f Events, %.0f Lease writes (its own included)",
		n, sw.total(), sw.byKind(), sw.events, sw.leaseWrites)
	b.ReportMetric(getLat.Seconds()*1000, "server-get-configmap-ms")
	b.Logf("N=%d: until all verified: %.1f of %d workers busy and %.0f instances queued on average; reconciles took p50 %s, p99 %s; the API server served %.0f ConfigMap GETs in the window, in %s each on average (its own measure, from its handler's start)",
		n, v.MeanBusy, v.Workers, v.MeanQueue, time.Duration(v.ReconcileP50).Round(time.Microsecond*100), time.Duration(v.ReconcileP99).Round(time.Microsecond*100), gets, getLat.Round(time.Microsecond*10))
	b.Logf("N=%d: kroscope's own counter: %d writes besides Lease, Events and access reviews (apply %d, merge %d, status %d, post %d, put %d, delete %d), %d Events, %d Lease writes, %d access reviews; reads: %d GET, %d LIST (watches aside), %d in all",
		n, c.Other, c.Mix.Apply, c.Mix.Merge, c.Mix.Status, c.Mix.Post, c.Mix.Put, c.Mix.Delete, c.Events, c.Lease, c.Reviews, c.Mix.Get, c.Mix.List, c.Reads)
	b.Logf("N=%d: %d state transitions after the first state %v; CPU: kroscope %.2f s in the window (%.2f s to all verified), API server %.2f s + etcd %.2f s; kroscope peak RSS %.1f MiB",
		n, win.Transitions, win.FirstTransitions, time.Duration(win.CPU).Seconds(), time.Duration(v.CPU).Seconds(),
		sw.cpu.apiServer.Seconds(), sw.cpu.etcd.Seconds(), float64(win.VmHWM)/1024)
	return restartResult{server: sw.cpu.apiServer + sw.cpu.etcd}
}

// startProc starts benchengine with args, talking JSON on its stdout.
func startProc(b *testing.B, bin string, args []string) *engineProc {
	p := &engineProc{cmd: exec.Command(bin, args...)}
	p.cmd.Stderr = &p.stderr
	in, err := p.cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	p.in, p.out = in, json.NewDecoder(out)
	if err := p.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	return p
}

// wait closes the process's stdin and waits for it to exit.
func (p *engineProc) wait(b *testing.B) {
	b.Helper()
	_ = p.in.Close()
	if err := p.cmd.Wait(); err != nil {
		b.Fatalf("benchengine: %v (stderr: %s)", err, p.stderr.String())
	}
}

// kill ends the process if it is still running (a benchmark that failed).
func (p *engineProc) kill() {
	if p.cmd.Process != nil && p.cmd.ProcessState == nil {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	}
}

func mapValues[K comparable, V any](m map[K]V) []V {
	out := make([]V, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// instanceStates counts the instances of gvr in ns by status.state.
func instanceStates(b *testing.B, dyn dynamic.Interface, gvr schema.GroupVersionResource, ns string) map[string]int {
	list, err := dyn.Resource(gvr).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]int{}
	for _, u := range list.Items {
		s, _, _ := unstructured.NestedString(u.Object, "status", "state")
		out[s]++
	}
	return out
}

// serverLatency is the API server's own time serving requests
// (apiserver_request_duration_seconds: sum and count) by "VERB resource".
type serverLatency map[string][2]float64

func readServerLatency(b *testing.B, env *envtest.Env) serverLatency {
	body, err := env.Kubernetes().CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		b.Fatalf("reading the API server's /metrics: %v", err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		b.Fatalf("parsing the API server's /metrics: %v", err)
	}
	out := serverLatency{}
	for _, m := range families["apiserver_request_duration_seconds"].GetMetric() {
		var verb, res string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "verb":
				verb = l.GetValue()
			case "resource":
				res = l.GetValue()
			}
		}
		h := m.GetHistogram()
		v := out[verb+" "+res]
		out[verb+" "+res] = [2]float64{v[0] + h.GetSampleSum(), v[1] + float64(h.GetSampleCount())}
	}
	return out
}

// mean is the mean latency of key's requests since before, and their count.
func (s serverLatency) mean(before serverLatency, key string) (time.Duration, float64) {
	sum, n := s[key][0]-before[key][0], s[key][1]-before[key][1]
	if n <= 0 {
		return 0, 0
	}
	return time.Duration(sum / n * float64(time.Second)), n
}
