//go:build bench

package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/graphs"
)

// writes counts the engine's write requests: Events, the Lease, and the rest.
type writes struct {
	next                        http.RoundTripper
	other, events, lease, reads atomic.Int64
}

func (w *writes) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		w.reads.Add(1)
	default:
		switch p := req.URL.Path; {
		case strings.Contains(p, "/events"):
			w.events.Add(1)
		case strings.Contains(p, "/leases"):
			w.lease.Add(1)
		default:
			w.other.Add(1)
		}
	}
	return w.next.RoundTrip(req)
}

func (w *writes) reset() { w.other.Store(0); w.events.Store(0); w.lease.Store(0); w.reads.Store(0) }

func BenchmarkEngineChain(b *testing.B) {
	for _, n := range []int{100, 500} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			for range b.N {
				runChain(b, n)
			}
		})
	}
}

func runChain(b *testing.B, n int) {
	env := envtest.Start(b)
	ns := env.Namespace(b)
	kind := fmt.Sprintf("BenchChain%d", n)
	dir := b.TempDir()
	rgd := filepath.Join(dir, "rgd.yaml")
	if err := os.WriteFile(rgd, []byte(graphs.Chain(strings.ToLower(kind), kind)), 0o644); err != nil {
		b.Fatal(err)
	}
	w := &writes{}
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 0, 0 // the engine's defaults
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { w.next = rt; return w })
	set, err := client.NewSet(cfg)
	if err != nil {
		b.Fatal(err)
	}
	// kroscope's defaults, with the lease in the benchmark's namespace.
	// BENCH_WORKERS overrides the worker count, to compare with the default.
	workers, _ := strconv.Atoi(os.Getenv("BENCH_WORKERS"))
	e, err := engine.New(engine.Options{ClientSet: set, RGDPaths: []string{rgd}, LeaseNamespace: ns, Log: logr.Discard(), Workers: workers})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	defer func() { cancel(); <-done }()

	var g state.Graph
	wait(b, e, 2*time.Minute, "graph served and lease held", func(s *state.Snapshot) bool {
		for _, x := range s.Graphs {
			if x.Served {
				g = x
			}
		}
		return g.Served && s.Mode.Reconciling
	})
	plural, _, _ := strings.Cut(g.Resource, ".")
	gvr := schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: plural}
	dyn := dynamic.NewForConfigOrDie(env.Config)

	// The API server holds every create of a custom resource for 2 s while
	// its CRD has been Established for less than 2 s (apiextensions-apiserver,
	// customresource_handler.go: a guard for HA API servers). kroscope has
	// just created the CRD; real instances arrive later. Start the clock
	// once the hold is over, so the benchmark measures kroscope.
	b.Logf("waited %s for the API server's hold on creates of a new CRD", waitCRDAge(b, dyn, g.Resource, 2*time.Second).Round(time.Millisecond))

	w.reset()
	// BENCH_APISERVER_PROFILE=FILE saves a CPU profile of the API server
	// taken while the instances converge (BENCH_APISERVER_PROFILE_SECONDS,
	// default 5): where its time goes.
	if out := os.Getenv("BENCH_APISERVER_PROFILE"); out != "" {
		go apiServerProfile(b, env.Config, out)
	}
	b.ResetTimer()
	created := make([]time.Time, n)
	start := time.Now()
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
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
		}()
	}
	wg.Wait()
	createdAll := time.Since(start)
	snap := wait(b, e, 5*time.Minute, fmt.Sprintf("%d instances ACTIVE", n), func(s *state.Snapshot) bool {
		c := 0
		for _, in := range s.Instances {
			if in.State == reconciler.InstanceStateActive {
				c++
			}
		}
		return c == n
	})
	b.StopTimer()

	var last time.Time
	lat := make([]time.Duration, 0, n)
	for _, in := range snap.Instances {
		var i int
		if _, err := fmt.Sscanf(in.Key.Name, "i%04d", &i); err != nil {
			continue
		}
		for _, t := range in.History {
			if t.To == reconciler.InstanceStateActive {
				lat = append(lat, t.At.Sub(created[i]))
				if t.At.After(last) {
					last = t.At
				}
				break
			}
		}
	}
	slices.Sort(lat)
	if os.Getenv("BENCH_SLOWEST") != "" {
		type slow struct {
			in *state.Instance
			d  time.Duration
		}
		var all []slow
		for _, in := range snap.Instances {
			var i int
			if _, err := fmt.Sscanf(in.Key.Name, "i%04d", &i); err != nil {
				continue
			}
			for _, t := range in.History {
				if t.To == reconciler.InstanceStateActive {
					all = append(all, slow{in, t.At.Sub(created[i])})
					break
				}
			}
		}
		slices.SortFunc(all, func(a, b slow) int { return int(b.d - a.d) })
		for _, x := range all[:5] {
			var h []string
			for _, t := range x.in.History {
				h = append(h, fmt.Sprintf("%s@%s %q", t.To, t.At.Sub(start).Round(time.Millisecond), t.Message))
			}
			b.Logf("slow %s: %s, %d reconciles, created at %s: %s", x.in.Key.Name, x.d.Round(time.Millisecond), x.in.Reconciles, created[0].Sub(start), strings.Join(h, "; "))
		}
	}
	total := last.Sub(start)
	other, events, reads := w.other.Load(), w.events.Load(), w.reads.Load()
	perInst := float64(other+events) / float64(n)

	w.reset()
	idleFor := 30 * time.Second
	if d, err := time.ParseDuration(os.Getenv("BENCH_IDLE")); err == nil {
		idleFor = d // shorter while experimenting; the target is for 30 s
	}
	time.Sleep(idleFor)
	idleOther, idleEvents := w.other.Load(), w.events.Load()
	idle := idleOther + idleEvents

	b.ReportMetric(total.Seconds(), "s-to-all-active")
	b.ReportMetric(lat[len(lat)/2].Seconds()*1000, "p50-ms")
	b.ReportMetric(lat[len(lat)*99/100].Seconds()*1000, "p99-ms")
	b.ReportMetric(perInst, "writes/instance")
	b.ReportMetric(float64(idle), fmt.Sprintf("idle-writes/%s", idleFor))
	b.Logf("N=%d: all ACTIVE in %s (creates took %s); creation→ACTIVE p50 %s p99 %s; writes/instance %.2f (%.2f without Events: %d objects+status, %d Events); writes in %s idle: %d (%d objects+status, %d Events; lease renewals not counted: %d); reconciles %d, workers %d, reads/instance %.1f",
		n, total.Round(time.Millisecond), createdAll.Round(time.Millisecond), lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)*99/100].Round(time.Millisecond),
		perInst, float64(other)/float64(n), other, events, idleFor, idle, idleOther, idleEvents, w.lease.Load(), snap.Engine.Reconciles, snap.Engine.Workers, float64(reads)/float64(n))
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

// wait polls the engine's state every 50 ms until cond holds. The times
// reported come from the state's own transition timestamps, so polling
// (rather than taking a snapshot on every change, which costs the machine
// CPU the API server needs) does not blur them.
func wait(b *testing.B, e *engine.Engine, timeout time.Duration, what string, cond func(*state.Snapshot) bool) *state.Snapshot {
	b.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if s := e.Snapshot(); cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			b.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
