package demo

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kroscope/kroscope/reconciler/graph"
)

func TestNewStoresGraphs(t *testing.T) {
	d, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	list, err := d.Cluster.Dynamic().Resource(graph.GroupVersionResource).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, r := range list.Items {
		got = append(got, r.GetName())
	}
	if strings.Join(got, ",") != "flaky.kro.run,pipeline.kro.run,webapp.kro.run" {
		t.Fatalf("graphs in the demo cluster: %v", got)
	}
	if n := len(d.Instances()); n != 5 {
		t.Fatalf("%d instances, want the 5 the examples list", n)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Examples: []string{"webapp", "nope"}}, `unknown example "nope": choose from broken, fanout, runaway, webapp`},
		{Options{Instances: -1}, "--instances"},
		{Options{FailRate: 1.5}, "--fail-rate"},
		{Options{FS: fstest.MapFS{"x/rgd.yaml": {Data: []byte("kind: ConfigMap\napiVersion: v1\nmetadata: {name: a}\n")}, "x/instances.yaml": {Data: []byte("kind: X\nmetadata: {name: a}\n")}}}, "examples/x/rgd.yaml: ConfigMap \"a\" is not a ResourceGraphDefinition"},
		{Options{FS: fstest.MapFS{"x/rgd.yaml": {Data: []byte("a: [")}}}, "examples/x/rgd.yaml: document 1"},
	} {
		_, err := New(tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want an error containing %q", tc.o, err, tc.want)
		}
	}
}

func TestScaleNamesCopies(t *testing.T) {
	d, err := New(Options{Examples: []string{"webapp"}, Instances: 5})
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, in := range d.Instances() {
		names = append(names, in.GetName())
	}
	if got := strings.Join(names, ","); got != "shop,blog,shop-2,blog-2,shop-3" {
		t.Fatalf("instances %s", got)
	}
}

// Run creates the instances once their kind is served; here the test plays
// the engine and creates the CRD itself.
func TestRunCreatesInstancesWhenServed(t *testing.T) {
	d, err := New(Options{Examples: []string{"webapp"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "webapps.kro.run"},
		"spec": map[string]any{
			"group": "kro.run", "scope": "Namespaced",
			"names":    map[string]any{"kind": "WebApp", "plural": "webapps"},
			"versions": []any{map[string]any{"name": "v1alpha1", "served": true, "storage": true}},
		},
	}}
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := d.Cluster.Dynamic().Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	apps := d.Cluster.Dynamic().Resource(schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: "webapps"}).Namespace(Namespace)
	deadline := time.Now().Add(30 * time.Second)
	for {
		l, err := apps.List(ctx, metav1.ListOptions{})
		if err == nil && len(l.Items) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("instances not created: %v %v", l, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func TestEngineOptions(t *testing.T) {
	d, err := New(Options{Examples: []string{"webapp"}})
	if err != nil {
		t.Fatal(err)
	}
	o := d.EngineOptions(0, logr.Discard())
	if o.Workers != WorkersPerCPU*runtime.NumCPU() {
		t.Errorf("default workers %d, want %d per CPU", o.Workers, WorkersPerCPU)
	}
	if !o.WatchClusterRGDs || !o.DisableLease || o.ClientSet == nil || !o.Cluster.Demo {
		t.Errorf("the demo reads its graphs from its cluster, takes no lease, and says it is the demo: %+v", o)
	}
	if o := d.EngineOptions(3, logr.Discard()); o.Workers != 3 {
		t.Errorf("explicit workers: %d", o.Workers)
	}
}
