//go:build bench

package bench

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/plan"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/graphs"
)

// planInstances is issue 28's scale: a plan over 1,000 instances must take
// at most 10 s on the test API server.
const planInstances = 1000

func planGraph(greeting string) string {
	return graphs.RGD("benchplan", "BenchPlan", "spec:\n  size: integer | default=1",
		graphs.ConfigMap("config", "${schema.metadata.name}-config", "greeting: "+greeting),
		graphs.ConfigMap("settings", "${schema.metadata.name}-settings", "size: ${string(schema.spec.size)}\nconfig: ${config.metadata.name}"))
}

// BenchmarkPlan1000 plans a template change over 1,000 reconciled
// instances (2 ConfigMaps each): a dry-run apply per changed child.
func BenchmarkPlan1000(b *testing.B) {
	env := envtest.Start(b)
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS = engine.DefaultClientQPS // as `kroscope plan` runs
	set, err := client.NewSet(cfg)
	if err != nil {
		b.Fatal(err)
	}
	ns := env.Namespace(b)
	old := buildPlanGraph(b, set, planGraph("hello"))
	env.InstallCRDs(b, old.Instance.CRD)
	set.RESTMapper().Reset()
	seedPlanInstances(b, set, old, ns)
	g := buildPlanGraph(b, set, planGraph("bonjour"))
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		p, err := plan.Graph(context.Background(), g, plan.Options{Set: set, Namespace: ns})
		took := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		s := plan.Summarize([]*plan.Plan{p})
		if s.Instances != planInstances || s.Change != planInstances || s.Fail != 0 {
			b.Fatalf("plan summary %+v, want %d changes", s, planInstances)
		}
		b.ReportMetric(took.Seconds(), "s/plan")
		b.Logf("plan over %d instances: %s (target <= 10s)", planInstances, took.Round(time.Millisecond))
	}
}

func buildPlanGraph(b *testing.B, set *client.Set, doc string) *graph.Graph {
	rgds, err := graph.Parse([]byte(doc), "benchplan")
	if err != nil {
		b.Fatal(err)
	}
	g, _, err := graph.NewBuilder(engine.GraphOptions(set, graph.NewCachedSchemaResolver(set.Discovery(), 0), false)...).Servable(rgds[0])
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// seedPlanInstances creates the instances and reconciles each once for
// real, 32 at a time, so their children exist as the engine leaves them.
func seedPlanInstances(b *testing.B, set *client.Set, g *graph.Graph, ns string) {
	ctl := reconciler.NewController(logr.Discard(), reconciler.ReconcileConfig{}, g.Instance.GVR, g, set, nil, metadata.NewGraphLabeler(g.Name, g.UID))
	defer ctl.Close()
	ri := set.Dynamic().Resource(g.Instance.GVR).Namespace(ns)
	sem := make(chan struct{}, 32)
	var wg sync.WaitGroup
	errs := make(chan error, planInstances)
	for i := range planInstances {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			name := fmt.Sprintf("i%04d", i)
			u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kro.run/v1alpha1", "kind": "BenchPlan",
				"metadata": map[string]any{"name": name}, "spec": map[string]any{"size": int64(i%5 + 1)}}}
			if _, err := ri.Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
				errs <- err
				return
			}
			req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
			for range 3 {
				if err := ctl.Reconcile(context.Background(), req); err == nil {
					return
				}
			}
			errs <- fmt.Errorf("instance %s did not settle", name)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}
