//go:build bench

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/graphs"
)

func BenchmarkEngineChain(b *testing.B) {
	engineBin := buildEngine(b)
	var at500 time.Duration
	for _, n := range []int{100, 500, 2000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			for range b.N {
				took := runChain(b, engineBin, n)
				switch {
				case n == 500:
					at500 = took
				case n == 2000 && at500 > 0:
					// Flatness: 4× the work should take 4× the time.
					b.ReportMetric(took.Seconds()/at500.Seconds(), "x-time-at-N=500")
					b.Logf("N=2000: all ACTIVE in %.2f× the time N=500 took (%s against %s; flat is 4×)",
						took.Seconds()/at500.Seconds(), took.Round(time.Millisecond), at500.Round(time.Millisecond))
				}
			}
		})
	}
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

// rawWrites creates n small ConfigMaps with the engine's worker count of
// concurrent clients (unthrottled, as the engine is) and returns the time
// it took: the API server's own write rate, the floor for kroscope's writes.
func rawWrites(b *testing.B, env *envtest.Env, n, concurrency int) time.Duration {
	b.Helper()
	ns := env.Namespace(b)
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = -1, 0
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range concurrency {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("raw%05d", i)}, Data: map[string]string{"k": "v"}}
				if _, err := kube.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start)
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

type counts struct{ Other, Events, Lease, Reads int64 }

// runChain runs one engine benchmark of n instances and returns the time
// from the first create to the last instance ACTIVE.
func runChain(b *testing.B, engineBin string, n int) time.Duration {
	env := envtest.Start(b)
	w := workers()
	rawCPU0 := serverCPU(b)
	raw := rawWrites(b, env, n, w)
	rawCPU := serverCPU(b) - rawCPU0
	rawRate := float64(n) / raw.Seconds()

	ns := env.Namespace(b)
	kind := fmt.Sprintf("BenchChain%d", n)
	dir := b.TempDir()
	rgd := filepath.Join(dir, "rgd.yaml")
	if err := os.WriteFile(rgd, []byte(graphs.Chain(strings.ToLower(kind), kind)), 0o644); err != nil {
		b.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	writeKubeconfig(b, env.Config, kubeconfig)
	idleFor := 30 * time.Second
	if d, err := time.ParseDuration(os.Getenv("BENCH_IDLE")); err == nil {
		idleFor = d // shorter while experimenting; the target is for 30 s
	}
	args := []string{"-api-kubeconfig", kubeconfig, "-rgd", rgd, "-lease-namespace", ns, "-n", strconv.Itoa(n), "-workers", strconv.Itoa(w), "-idle", idleFor.String()}
	// BENCH_HEAP_PROFILE=DIR saves the engine's heap profile once the
	// instances are ACTIVE, as DIR/heap-N<n>.pprof.
	if d := os.Getenv("BENCH_HEAP_PROFILE"); d != "" {
		args = append(args, "-heap-profile", d)
	}
	// BENCH_SLOWEST=1 prints the five slowest instances with their history.
	slowest := os.Getenv("BENCH_SLOWEST") != ""
	if slowest {
		args = append(args, "-histories")
	}
	// BENCH_CPU_PROFILE=DIR saves the engine's CPU profile from the first
	// create to all ACTIVE, as DIR/cpu-N<n>.pprof.
	if d := os.Getenv("BENCH_CPU_PROFILE"); d != "" {
		args = append(args, "-cpu-profile", filepath.Join(d, fmt.Sprintf("cpu-N%d.pprof", n)))
	}
	p := &engineProc{cmd: exec.Command(engineBin, args...)}
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
	defer func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
	}()
	var ready struct{ Resource string }
	p.next(b, &ready)
	plural, _, _ := strings.Cut(ready.Resource, ".")
	gvr := schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: plural}
	dyn := dynamic.NewForConfigOrDie(env.Config)

	// The API server holds every create of a custom resource for 2 s while
	// its CRD has been Established for less than 2 s (apiextensions-apiserver,
	// customresource_handler.go: a guard for HA API servers). kroscope has
	// just created the CRD; real instances arrive later. Start the clock
	// once the hold is over, so the benchmark measures kroscope.
	b.Logf("waited %s for the API server's hold on creates of a new CRD", waitCRDAge(b, dyn, ready.Resource, 2*time.Second).Round(time.Millisecond))

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
	b.ResetTimer()
	cpu0 := childCPU(b)
	created := make([]time.Time, n)
	start := time.Now()
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range 16 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				u := &unstructured.Unstructured{Object: map[string]any{
					"apiVersion": "kro.run/v1alpha1", "kind": kind,
					"metadata": map[string]any{"name": fmt.Sprintf("i%04d", i), "namespace": ns},
					"spec":     map[string]any{},
				}}
				created[i] = time.Now()
				if _, err := dyn.Resource(gvr).Namespace(ns).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	createdAll := time.Since(start)
	var active struct {
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
	}
	p.next(b, &active)
	b.StopTimer()
	// The API server's and etcd's CPU while the instances converged: the
	// benchmark's creates of the instances are in it too.
	split := childCPU(b).sub(cpu0)
	server := split.apiServer + split.etcd

	var last time.Time
	lat := make([]time.Duration, 0, n)
	for name, at := range active.ActiveAt {
		var i int
		if _, err := fmt.Sscanf(name, "i%04d", &i); err != nil || i >= n {
			continue
		}
		t := time.Unix(0, at)
		lat = append(lat, t.Sub(created[i]))
		if t.After(last) {
			last = t
		}
	}
	slices.Sort(lat)
	if len(lat) != n {
		b.Fatalf("%d of %d instances have an ACTIVE time", len(lat), n)
	}
	if slowest {
		names := make([]string, 0, len(active.ActiveAt))
		for name := range active.ActiveAt {
			names = append(names, name)
		}
		took := func(name string) time.Duration {
			var i int
			_, _ = fmt.Sscanf(name, "i%04d", &i)
			return time.Unix(0, active.ActiveAt[name]).Sub(created[i])
		}
		slices.SortFunc(names, func(a, b string) int { return int(took(b) - took(a)) })
		for _, name := range names[:min(5, len(names))] {
			var h []string
			for _, t := range active.Histories[name] {
				h = append(h, fmt.Sprintf("%s@%s %q", t.To, time.Unix(0, t.At).Sub(start).Round(time.Millisecond), t.Message))
			}
			b.Logf("slow %s: %s: %s", name, took(name).Round(time.Millisecond), strings.Join(h, "; "))
		}
	}
	total := last.Sub(start)
	c := active.Counts
	perInst := float64(c.Other+c.Events) / float64(n)

	var idle struct {
		Counts             counts
		VmHWM              int64
		PeakAnon, PeakFile int64
	}
	p.next(b, &idle)
	_ = p.in.Close()
	if err := p.cmd.Wait(); err != nil {
		b.Fatalf("benchengine: %v (stderr: %s)", err, p.stderr.String())
	}
	ps := p.cmd.ProcessState
	cpu := ps.UserTime() + ps.SystemTime()
	// The peak is the engine's own VmHWM, read by it just before it
	// exits: ru_maxrss of a child also counts this benchmark process's
	// peak at exec time (see followHWM), which the demo benchmarks raise.
	maxRSS := idle.VmHWM
	idleWrites := idle.Counts.Other + idle.Counts.Events
	// The floor: the writes kroscope made, at the API server's raw rate.
	floor := time.Duration(float64(c.Other+c.Events) / rawRate * float64(time.Second))

	b.ReportMetric(total.Seconds(), "s-to-all-active")
	b.ReportMetric(lat[len(lat)/2].Seconds()*1000, "p50-ms")
	b.ReportMetric(lat[len(lat)*99/100].Seconds()*1000, "p99-ms")
	b.ReportMetric(perInst, "writes/instance")
	b.ReportMetric(float64(c.Reads)/float64(n), "reads/instance")
	b.ReportMetric(float64(idleWrites), fmt.Sprintf("idle-writes/%s", idleFor))
	b.ReportMetric(cpu.Seconds(), "kroscope-cpu-s")
	b.ReportMetric(float64(maxRSS)/1024, "kroscope-peak-rss-MiB")
	b.ReportMetric(float64(idle.PeakAnon)/1024, "kroscope-peak-anon-MiB")
	b.ReportMetric(rawRate, "raw-writes/s")
	b.ReportMetric(server.Seconds()*1000/float64(n), "apiserver-cpu-ms/instance")
	b.ReportMetric(total.Seconds()/floor.Seconds(), "x-floor")
	b.Logf("N=%d: all ACTIVE in %s (creates took %s); creation→ACTIVE p50 %s p99 %s; writes/instance %.2f (%.2f without Events: %d objects+status, %d Events); writes in %s idle: %d (%d objects+status, %d Events; lease renewals not counted: %d); reconciles %d, workers %d (%.1f busy, queue %.0f on average), reads/instance %.1f",
		n, total.Round(time.Millisecond), createdAll.Round(time.Millisecond), lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)*99/100].Round(time.Millisecond),
		perInst, float64(c.Other)/float64(n), c.Other, c.Events, idleFor, idleWrites, idle.Counts.Other, idle.Counts.Events, idle.Counts.Lease, active.Reconciles, active.Workers, active.MeanBusy, active.MeanQueue, float64(c.Reads)/float64(n))
	b.Logf("N=%d: kroscope (own process) CPU %.1f s (user %.1f, sys %.1f), peak RSS %.1f MiB (VmHWM) = at most %.1f MiB anonymous (heap, stacks) + %.1f MiB file-backed (the binary's pages), heap in use once ACTIVE %.1f MiB, %d goroutines",
		n, cpu.Seconds(), ps.UserTime().Seconds(), ps.SystemTime().Seconds(), float64(maxRSS)/1024,
		float64(idle.PeakAnon)/1024, float64(idle.PeakFile)/1024, float64(active.HeapInuse)/(1<<20), active.Goroutines)
	b.Logf("N=%d: API server and etcd CPU while converging %.1f s (%.1f ms per instance: API server %.1f, etcd %.1f; its create by the benchmark included; a raw create took %.2f ms)",
		n, server.Seconds(), server.Seconds()*1000/float64(n), split.apiServer.Seconds()*1000/float64(n), split.etcd.Seconds()*1000/float64(n), rawCPU.Seconds()*1000/float64(n))
	b.Logf("N=%d: raw write rate %.0f creates/s (%d ConfigMaps, %d clients, %s); kroscope writes needed / raw write rate = %d / %.0f/s = %s floor; all ACTIVE in %.2f× the floor",
		n, rawRate, n, w, raw.Round(time.Millisecond), c.Other+c.Events, rawRate, floor.Round(time.Millisecond), total.Seconds()/floor.Seconds())
	return total
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
