//go:build bench

package bench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/graphs"
	"github.com/kroscope/kroscope/test/krocontroller"
)

var (
	gvrRGD = schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: "resourcegraphdefinitions"}
	gvrCRD = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// kroArgs are kro's flags beyond krocontroller's defaults: its metrics on
// port (where the benchmark reads its reconcile count), and rate limits
// high enough not to be what the row measures: the client's (default 100
// QPS, burst 150) and the work queue's for requeues (default 10 a second,
// burst 100: each chain instance requeues while its children become
// ready, so converging 2,000 waited on it). BENCH_KRO_ARGS
// (space-separated) adds more.
func kroArgs(port int) []string {
	args := []string{fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", port), "--client-qps=1000", "--client-burst=2000",
		"--dynamic-controller-rate-limiter-rate-limit=1000", "--dynamic-controller-rate-limiter-burst-limit=2000"}
	return append(args, strings.Fields(os.Getenv("BENCH_KRO_ARGS"))...)
}

// runKroRestart is the kro side of the restart row: kro's CRDs installed,
// the chain graph created as a cluster ResourceGraphDefinition of its own,
// kro's controller converging n instances, stopped and started again, and
// the window after the start measured as for kroscope. Verified is when
// kro's instance_reconcile_total for the graph first reached n: kro
// exposes no per-instance first reconcile, so a count that includes an
// instance reconciled twice makes it a lower bound.
func runKroRestart(b *testing.B, n int) restartResult {
	env := envtest.Start(b)
	env.InstallCRDs(b, krocontroller.CRDs(b)...)
	ns := env.Namespace(b)
	kind := fmt.Sprintf("BenchKroRestart%d", n)
	dyn := dynamic.NewForConfigOrDie(env.Config)
	port := freePort(b)
	kro := krocontroller.New(b, env.Config, krocontroller.Options{Workers: workers(), Args: kroArgs(port)})
	kro.Start()
	rgdName := createClusterRGD(b, dyn, strings.ToLower(kind), kind)
	// With kro running: kro takes its finalizer off the graph, and a later
	// row's kro then serves only its own graph.
	defer deleteClusterRGD(b, dyn, kro, rgdName)
	gvr := waitKroCRD(b, dyn, kind)

	start := time.Now()
	parallelClients(n, 16, func(i int) {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kro.run/v1alpha1", "kind": kind,
			"metadata": map[string]any{"name": fmt.Sprintf("i%04d", i), "namespace": ns},
			"spec":     map[string]any{},
		}}
		if _, err := dyn.Resource(gvr).Namespace(ns).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
			b.Error(err)
		}
	})
	waitAllActive(b, dyn, gvr, ns, n, 15*time.Minute)
	b.Logf("N=%d: kro: all ACTIVE %s after the first create", n, time.Since(start).Round(time.Millisecond))
	kro.Stop()

	window := restartWindow()
	before, cpu0 := env.ServerRequests(b), childCPU(b)
	b.ResetTimer()
	t0 := time.Now()
	kro.Start()
	var verified time.Duration
	var m kroMetrics
	for time.Since(t0) < window {
		time.Sleep(200 * time.Millisecond)
		if m = readKroMetrics(port, gvr.Resource); verified == 0 && m.reconciles >= float64(n) {
			verified = time.Since(t0)
		}
	}
	cpu := kroCPU(b)
	b.StopTimer()
	sw := serverSince(b, env, before, cpu0)
	m = readKroMetrics(port, gvr.Resource)
	states := instanceStates(b, dyn, gvr, ns)

	sw.report(b)
	if verified > 0 {
		b.ReportMetric(verified.Seconds(), "s-to-n-reconciles")
	}
	b.ReportMetric(m.transitions, "transitions")
	b.ReportMetric(m.reconciles, "kro-reconciles")
	b.ReportMetric(cpu.Seconds(), "kro-cpu-s")
	b.Logf("N=%d: kro restarted: %.0f reconciles in the %s window, the n-th at %s (0: never); states at its end %v; %.0f state transitions (kro's instance_state_transitions_total: %s)",
		n, m.reconciles, window, verified.Round(time.Millisecond), states, m.transitions, m.transitionKinds)
	b.Logf("N=%d: the API server counted %.0f writes besides Leases and access reviews (%s), %.0f Events, %.0f Lease writes (its own included)",
		n, sw.total(), sw.byKind(), sw.events, sw.leaseWrites)
	b.Logf("N=%d: CPU in the window: kro %.2f s, API server %.2f s + etcd %.2f s", n, cpu.Seconds(), sw.cpu.apiServer.Seconds(), sw.cpu.etcd.Seconds())
	return restartResult{server: sw.cpu.apiServer + sw.cpu.etcd}
}

// createClusterRGD creates graphs.Chain as a cluster object and returns
// its name.
func createClusterRGD(b *testing.B, dyn dynamic.Interface, name, kind string) string {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(graphs.Chain(name, kind)), &u.Object); err != nil {
		b.Fatal(err)
	}
	if _, err := dyn.Resource(gvrRGD).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	return name
}

func deleteClusterRGD(b *testing.B, dyn dynamic.Interface, kro *krocontroller.Controller, name string) {
	ctx := context.Background()
	if err := dyn.Resource(gvrRGD).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		b.Log(err)
		return
	}
	kro.Start()
	defer kro.Stop()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if _, err := dyn.Resource(gvrRGD).Get(ctx, name, metav1.GetOptions{}); err != nil {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	b.Logf("kro did not remove the graph %s within a minute", name)
}

// waitKroCRD waits until kro has created and the API server serves the
// CRD for kind, and returns its resource.
func waitKroCRD(b *testing.B, dyn dynamic.Interface, kind string) schema.GroupVersionResource {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		list, err := dyn.Resource(gvrCRD).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range list.Items {
			k, _, _ := unstructured.NestedString(c.Object, "spec", "names", "kind")
			plural, _, _ := unstructured.NestedString(c.Object, "spec", "names", "plural")
			if k != kind || !established(c) {
				continue
			}
			// The API server holds creates for 2 s after a CRD is
			// Established (see startEngine).
			waitCRDAge(b, dyn, c.GetName(), 2*time.Second)
			return schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: plural}
		}
		time.Sleep(200 * time.Millisecond)
	}
	b.Fatalf("kro served no CRD for %s within 2 minutes", kind)
	return schema.GroupVersionResource{}
}

func established(crd unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// waitAllActive waits until n instances of gvr in ns are ACTIVE.
func waitAllActive(b *testing.B, dyn dynamic.Interface, gvr schema.GroupVersionResource, ns string, n int, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for {
		s := instanceStates(b, dyn, gvr, ns)
		if s["ACTIVE"] == n {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d instances ACTIVE after %s: %v", s["ACTIVE"], n, timeout, s)
		}
		time.Sleep(time.Second)
	}
}

// kroMetrics are the figures read from kro's /metrics for one graph.
type kroMetrics struct {
	reconciles, transitions float64
	transitionKinds         string
}

// readKroMetrics reads kro's instance_reconcile_total and
// instance_state_transitions_total for the graph whose instances' plural
// is resource (their gvr label names it); zero while kro is not serving.
func readKroMetrics(port int, resource string) kroMetrics {
	var m kroMetrics
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		return m
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return m
	}
	var kinds []string
	for name, f := range families {
		if name != "instance_reconcile_total" && name != "instance_state_transitions_total" {
			continue
		}
		for _, s := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range s.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if !strings.Contains(labels["gvr"], resource) {
				continue
			}
			v := s.GetCounter().GetValue()
			if name == "instance_reconcile_total" {
				m.reconciles += v
				continue
			}
			m.transitions += v
			kinds = append(kinds, fmt.Sprintf("%s→%s: %.0f", labels["from_state"], labels["to_state"], v))
		}
	}
	m.transitionKinds = strings.Join(kinds, ", ")
	return m
}

// kroCPU is the user+system CPU of this process's child named
// "controller" (kro's binary), from /proc.
func kroCPU(b *testing.B) time.Duration {
	cpu, ok := childrenCPU("controller")["controller"]
	if !ok {
		b.Fatal("no kro controller child process found in /proc")
	}
	return cpu
}

// freePort is a TCP port nobody listens on now.
func freePort(b *testing.B) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
