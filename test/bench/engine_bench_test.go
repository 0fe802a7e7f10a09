//go:build bench

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/graphs"
)

func BenchmarkEngineChain(b *testing.B) {
	engineBin := buildEngine(b)
	took := map[int]time.Duration{}
	for _, n := range benchRows(b) {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			for range b.N {
				took[n] = runChain(b, engineBin, n)
				// Flatness: k× the work should take k× the time.
				for _, r := range [][2]int{{500, 2000}, {2000, 10000}} {
					if n == r[1] && took[r[0]] > 0 {
						x := took[n].Seconds() / took[r[0]].Seconds()
						b.ReportMetric(x, fmt.Sprintf("x-time-at-N=%d", r[0]))
						b.Logf("N=%d: all ACTIVE in %.2f× the time N=%d took (%s against %s; flat is %d×)",
							n, x, r[0], took[n].Round(time.Millisecond), took[r[0]].Round(time.Millisecond), r[1]/r[0])
					}
				}
			}
		})
	}
}

// benchRows are the instance counts to run: BENCH_ROWS (say "1,500"), or
// all of them.
func benchRows(b *testing.B) []int {
	v := os.Getenv("BENCH_ROWS")
	if v == "" {
		return []int{1, 100, 500, 2000, 10000}
	}
	var rows []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 10000 {
			b.Fatalf("BENCH_ROWS: %q is not an instance count from 1 to 10000", f)
		}
		rows = append(rows, n)
	}
	return rows
}

// buildEngine builds test/bench/benchengine, which runs the engine in a
// process of its own: its CPU time and peak RSS are then the engine's
// alone, read from the operating system when it exits. It is built as
// kroscope ships (make build, the image): without cgo, a static binary, so
// no dynamic loader maps and relocates shared libraries into its RSS.
func buildEngine(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "benchengine")
	cmd := exec.Command("go", "build", "-o", bin, "./benchengine")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("building benchengine: %v\n%s", err, out)
	}
	return bin
}

// workers is the engine's worker count: BENCH_WORKERS, or its default.
func workers() int {
	if w, _ := strconv.Atoi(os.Getenv("BENCH_WORKERS")); w > 0 {
		return w
	}
	return engine.WorkersPerCPU * runtime.NumCPU()
}

// engineProc is the running benchengine.
type engineProc struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *json.Decoder
	stderr strings.Builder
}

func (p *engineProc) next(b *testing.B, into any) {
	b.Helper()
	if err := p.out.Decode(into); err != nil {
		b.Fatalf("reading benchengine: %v (stderr: %s)", err, p.stderr.String())
	}
}

type counts struct {
	Other, Events, Lease, Reads, Reviews int64
	Mix                                  mix
}

// activeMsg is benchengine's "active" message.
type activeMsg struct {
	ActiveAt  map[string]int64
	Histories map[string][]struct {
		To      string
		At      int64
		Message string
	}
	Reconciles int64
	Workers    int
	Counts     counts
	HeapInuse  uint64
	Goroutines int
	MeanBusy   float64
	MeanQueue  float64
	CPU        int64
	Template   []request
}

// idleMsg is benchengine's "idle" message.
type idleMsg struct {
	Counts             counts
	VmHWM              int64
	PeakAnon, PeakFile int64
}

// chainRun is one row's engine run.
type chainRun struct {
	n          int
	ns, kind   string
	resource   string // the instances' plural
	start      time.Time
	created    []time.Time
	createdAll time.Duration
	server     serverCPUs // while converging, the benchmark's creates in it
	active     activeMsg
	idle       idleMsg
	idleFor    time.Duration // BENCH_IDLE (default 30 s) unless set before startEngine
	proc       *os.ProcessState
	// The files startEngine wrote for benchengine: a restarted engine
	// (restart_bench_test.go) is started on the same.
	rgd, kubeconfig string
}

// runChain runs one engine benchmark of n instances and returns the time
// from the first create to the last instance ACTIVE.
func runChain(b *testing.B, engineBin string, n int) time.Duration {
	env := envtest.Start(b)
	w := workers()
	r := &chainRun{n: n, ns: env.Namespace(b), kind: fmt.Sprintf("BenchChain%d", n)}
	p := r.startEngine(b, env, engineBin, w)
	defer func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
	}()
	b.ResetTimer()
	cpu0 := childCPU(b)
	r.createInstances(b, env)
	p.next(b, &r.active)
	b.StopTimer()
	// The API server's and etcd's CPU while the instances converged: the
	// benchmark's creates of the instances are in it too.
	r.server = childCPU(b).sub(cpu0)
	lat, last := r.latencies(b)
	if os.Getenv("BENCH_SLOWEST") != "" {
		r.logSlowest(b)
	}
	p.next(b, &r.idle)
	_ = p.in.Close()
	if err := p.cmd.Wait(); err != nil {
		b.Fatalf("benchengine: %v (stderr: %s)", err, p.stderr.String())
	}
	r.proc = p.cmd.ProcessState
	total := last.Sub(r.start)
	// The engine is gone: the floor's instances are nobody's to reconcile.
	uid := templateUID(b, env.Config, "/apis/kro.run/v1alpha1/namespaces/"+r.ns+"/"+r.resource+"/i0000")
	// BENCH_TEMPLATE=FILE saves the requests the engine sent for i0000 and
	// its children (what the floor replays), to read their bodies.
	if out := os.Getenv("BENCH_TEMPLATE"); out != "" {
		data, _ := json.MarshalIndent(r.active.Template, "", "  ")
		if err := os.WriteFile(out, data, 0o644); err != nil {
			b.Log(err)
		}
	}
	// BENCH_FLOOR_PROFILE=FILE saves a CPU profile of the API server taken
	// while the floor runs, to set beside BENCH_APISERVER_PROFILE's.
	if out := os.Getenv("BENCH_FLOOR_PROFILE"); out != "" {
		go apiServerProfile(b, env.Config, out)
	}
	f := newReplayer(b, env.Config, r.ns, r.kind, r.resource, "i0000", uid, r.active.Template).floor(n, w)
	r.report(b, total, lat, f, w)
	return total
}

// startEngine starts benchengine on a graph of its own and returns once
// the API server accepts its instances.
func (r *chainRun) startEngine(b *testing.B, env *envtest.Env, engineBin string, w int) *engineProc {
	dir := b.TempDir()
	rgd := filepath.Join(dir, "rgd.yaml")
	if err := os.WriteFile(rgd, []byte(graphs.Chain(strings.ToLower(r.kind), r.kind)), 0o644); err != nil {
		b.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	writeKubeconfig(b, env.Config, kubeconfig)
	r.rgd, r.kubeconfig = rgd, kubeconfig
	if r.idleFor == 0 {
		r.idleFor = 30 * time.Second
		if d, err := time.ParseDuration(os.Getenv("BENCH_IDLE")); err == nil {
			r.idleFor = d // shorter while experimenting; the target is for 30 s
		}
	}
	args := []string{"-api-kubeconfig", kubeconfig, "-rgd", rgd, "-lease-namespace", r.ns, "-n", strconv.Itoa(r.n),
		"-workers", strconv.Itoa(w), "-idle", r.idleFor.String(), "-template", "i0000"}
	// BENCH_HEAP_PROFILE=DIR saves the engine's heap profile once the
	// instances are ACTIVE, as DIR/heap-N<n>.pprof.
	if d := os.Getenv("BENCH_HEAP_PROFILE"); d != "" {
		args = append(args, "-heap-profile", d)
	}
	// BENCH_SLOWEST=1 prints the five slowest instances with their history.
	if os.Getenv("BENCH_SLOWEST") != "" {
		args = append(args, "-histories")
	}
	// BENCH_CPU_PROFILE=DIR saves the engine's CPU profile from the first
	// create to all ACTIVE, as DIR/cpu-N<n>.pprof.
	if d := os.Getenv("BENCH_CPU_PROFILE"); d != "" {
		args = append(args, "-cpu-profile", filepath.Join(d, fmt.Sprintf("cpu-N%d.pprof", r.n)))
	}
	p := startProc(b, engineBin, args)
	var ready struct{ Resource string }
	p.next(b, &ready)
	r.resource, _, _ = strings.Cut(ready.Resource, ".")
	// The API server holds every create of a custom resource for 2 s while
	// its CRD has been Established for less than 2 s (apiextensions-apiserver,
	// customresource_handler.go: a guard for HA API servers). kroscope has
	// just created the CRD; real instances arrive later. Start the clock
	// once the hold is over, so the benchmark measures kroscope.
	b.Logf("waited %s for the API server's hold on creates of a new CRD", waitCRDAge(b, dynamic.NewForConfigOrDie(env.Config), ready.Resource, 2*time.Second).Round(time.Millisecond))
	if _, err := io.WriteString(p.in, "go\n"); err != nil {
		b.Fatal(err)
	}
	var ack struct{ Event string }
	p.next(b, &ack)
	// BENCH_APISERVER_PROFILE=FILE saves a CPU profile of the API server
	// taken while the instances converge (BENCH_APISERVER_PROFILE_SECONDS,
	// default 5): where its time goes.
	if out := os.Getenv("BENCH_APISERVER_PROFILE"); out != "" {
		go apiServerProfile(b, env.Config, out)
	}
	return p
}

// createInstances creates the n instances from 16 clients, noting when
// each create was sent.
func (r *chainRun) createInstances(b *testing.B, env *envtest.Env) {
	gvr := schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: r.resource}
	dyn := dynamic.NewForConfigOrDie(env.Config)
	r.created = make([]time.Time, r.n)
	r.start = time.Now()
	parallelClients(r.n, 16, func(i int) {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kro.run/v1alpha1", "kind": r.kind,
			"metadata": map[string]any{"name": fmt.Sprintf("i%04d", i), "namespace": r.ns},
			"spec":     map[string]any{},
		}}
		r.created[i] = time.Now()
		if _, err := dyn.Resource(gvr).Namespace(r.ns).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
			b.Error(err)
		}
	})
	r.createdAll = time.Since(r.start)
}

// latencies are each instance's creation → ACTIVE times, sorted, and the
// moment the last became ACTIVE.
func (r *chainRun) latencies(b *testing.B) ([]time.Duration, time.Time) {
	var last time.Time
	lat := make([]time.Duration, 0, r.n)
	for name, at := range r.active.ActiveAt {
		var i int
		if _, err := fmt.Sscanf(name, "i%04d", &i); err != nil || i >= r.n {
			continue
		}
		t := time.Unix(0, at)
		lat = append(lat, t.Sub(r.created[i]))
		if t.After(last) {
			last = t
		}
	}
	slices.Sort(lat)
	if len(lat) != r.n {
		b.Fatalf("%d of %d instances have an ACTIVE time", len(lat), r.n)
	}
	return lat, last
}

// logSlowest logs the five slowest instances with their histories.
func (r *chainRun) logSlowest(b *testing.B) {
	names := slices.Collect(maps.Keys(r.active.ActiveAt))
	took := func(name string) time.Duration {
		var i int
		_, _ = fmt.Sscanf(name, "i%04d", &i)
		return time.Unix(0, r.active.ActiveAt[name]).Sub(r.created[i])
	}
	slices.SortFunc(names, func(a, b string) int { return int(took(b) - took(a)) })
	for _, name := range names[:min(5, len(names))] {
		var h []string
		for _, t := range r.active.Histories[name] {
			h = append(h, fmt.Sprintf("%s@%s %q", t.To, time.Unix(0, t.At).Sub(r.start).Round(time.Millisecond), t.Message))
		}
		b.Logf("slow %s: %s: %s", name, took(name).Round(time.Millisecond), strings.Join(h, "; "))
	}
}

// report reports the row's metrics and logs them.
func (r *chainRun) report(b *testing.B, total time.Duration, lat []time.Duration, f floorResult, w int) {
	n, c, per := r.n, r.active.Counts, func(v int64) float64 { return float64(v) / float64(r.n) }
	ms := func(d time.Duration) float64 { return d.Seconds() * 1000 / float64(n) }
	// The benchmark's own creates, measured apart (the floor's first
	// phase), are not the engine's cost.
	server := r.server.apiServer + r.server.etcd - f.createCPU
	cpu := r.proc.UserTime() + r.proc.SystemTime()
	b.ReportMetric(total.Seconds(), "s-to-all-active")
	b.ReportMetric(lat[len(lat)/2].Seconds()*1000, "p50-ms")
	b.ReportMetric(lat[len(lat)*99/100].Seconds()*1000, "p99-ms")
	b.ReportMetric(ms(server), "apiserver-cpu-ms/instance")
	b.ReportMetric(ms(time.Duration(r.active.CPU)), "kroscope-cpu-ms/instance")
	b.ReportMetric(cpu.Seconds(), "kroscope-cpu-s")
	b.ReportMetric(float64(r.idle.VmHWM)/1024, "kroscope-peak-rss-MiB")
	b.ReportMetric(total.Seconds()/f.total().Seconds(), "x-floor")
	m := c.Mix
	for _, v := range []struct {
		name string
		n    int64
	}{{"get", m.Get}, {"list", m.List}, {"post", m.Post}, {"apply", m.Apply}, {"merge", m.Merge}, {"status", m.Status}, {"put", m.Put}, {"delete", m.Delete}} {
		b.ReportMetric(per(v.n), v.name+"/instance")
	}
	idleWrites := r.idle.Counts.Other + r.idle.Counts.Events
	b.ReportMetric(float64(idleWrites), fmt.Sprintf("idle-writes/%s", r.idleFor))
	b.Logf("N=%d: all ACTIVE in %s (creates took %s); creation→ACTIVE p50 %s p99 %s; reconciles %d, workers %d (%.1f busy, queue %.0f on average)",
		n, total.Round(time.Millisecond), r.createdAll.Round(time.Millisecond), lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)*99/100].Round(time.Millisecond),
		r.active.Reconciles, r.active.Workers, r.active.MeanBusy, r.active.MeanQueue)
	b.Logf("N=%d: requests per instance: GET %.2f, LIST %.2f, POST %.2f, PATCH-apply %.2f, PATCH-merge %.2f, status PATCH %.2f, PUT %.2f, DELETE %.2f; Events %.2f; in %s idle: %d writes (lease renewals not counted: %d)",
		n, per(m.Get), per(m.List), per(m.Post), per(m.Apply), per(m.Merge), per(m.Status), per(m.Put), per(m.Delete), per(c.Events), r.idleFor, idleWrites, r.idle.Counts.Lease)
	b.Logf("N=%d: kroscope (own process) CPU %.1f s in all (user %.1f, sys %.1f), %.2f ms per instance while converging; peak RSS %.1f MiB (VmHWM) = at most %.1f MiB anonymous + %.1f MiB file-backed; heap in use once ACTIVE %.1f MiB, %d goroutines",
		n, cpu.Seconds(), r.proc.UserTime().Seconds(), r.proc.SystemTime().Seconds(), ms(time.Duration(r.active.CPU)), float64(r.idle.VmHWM)/1024,
		float64(r.idle.PeakAnon)/1024, float64(r.idle.PeakFile)/1024, float64(r.active.HeapInuse)/(1<<20), r.active.Goroutines)
	b.Logf("N=%d: API server and etcd CPU per instance %.2f ms (%.2f while converging: API server %.2f, etcd %.2f; minus the benchmark's create, %.2f measured apart)",
		n, ms(server), ms(r.server.apiServer+r.server.etcd), ms(r.server.apiServer), ms(r.server.etcd), ms(f.createCPU))
	b.Logf("N=%d: request-mix floor %s = %s for the instance creates (16 clients) + %s for the engine's %d requests per instance replayed from %d clients (API server CPU %.2f ms per instance); all ACTIVE in %.2f× the floor",
		n, f.total().Round(time.Millisecond), f.creates.Round(time.Millisecond), f.replay.Round(time.Millisecond), f.requestsPerInstance, w, ms(f.replayCPU), total.Seconds()/f.total().Seconds())
}

// writeKubeconfig saves cfg (the test API server's admin) for benchengine.
func writeKubeconfig(b *testing.B, cfg *rest.Config, path string) {
	b.Helper()
	if err := envtest.WriteKubeconfig(cfg, path); err != nil {
		b.Fatal(err)
	}
}

// waitCRDAge waits until the CRD named crd has been Established for age,
// and returns how long it waited.
func waitCRDAge(b *testing.B, dyn dynamic.Interface, crd string, age time.Duration) time.Duration {
	b.Helper()
	gvr := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	u, err := dyn.Resource(gvr).Get(context.Background(), crd, metav1.GetOptions{})
	if err != nil {
		b.Fatal(err)
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] != "Established" || m["status"] != "True" {
			continue
		}
		at, err := time.Parse(time.RFC3339, fmt.Sprint(m["lastTransitionTime"]))
		if err != nil {
			b.Fatal(err)
		}
		// lastTransitionTime has second precision: one more second is safe.
		d := time.Until(at.Add(age + time.Second))
		if d > 0 {
			time.Sleep(d)
			return d
		}
		return 0
	}
	b.Fatalf("CRD %s is not Established", crd)
	return 0
}

// apiServerProfile saves the API server's CPU profile (its /debug/pprof is
// on by default) into out.
func apiServerProfile(b *testing.B, cfg *rest.Config, out string) {
	c, err := rest.UnversionedRESTClientFor(withNegotiator(cfg))
	if err != nil {
		b.Log(err)
		return
	}
	seconds := os.Getenv("BENCH_APISERVER_PROFILE_SECONDS")
	if seconds == "" {
		seconds = "5"
	}
	data, err := c.Get().AbsPath("/debug/pprof/profile").Param("seconds", seconds).DoRaw(context.Background())
	if err != nil {
		b.Log(err)
		return
	}
	if err := os.WriteFile(out, data, 0o644); err != nil {
		b.Log(err)
	}
}

func withNegotiator(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	return c
}
