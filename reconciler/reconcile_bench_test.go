package reconciler_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kroscope/kroscope/memcluster"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
	"github.com/kroscope/kroscope/test/graphs"
)

// mapReader serves every read from objects the benchmark fetched once, as
// the engine's Reader serves a converged instance from its watches (a copy
// per read).
type mapReader map[string]*unstructured.Unstructured

func readerKey(gvr schema.GroupVersionResource, ns, name string) string {
	return gvr.String() + "|" + ns + "/" + name
}

func (m mapReader) Instance(gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, bool) {
	return m.get(gvr, ns, name)
}

func (m mapReader) Child(gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, bool) {
	return m.get(gvr, ns, name)
}

func (m mapReader) get(gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, bool) {
	u, ok := m[readerKey(gvr, ns, name)]
	if !ok {
		return nil, false
	}
	return u.DeepCopy(), true
}

// Unseen: the benchmark fetched everything there is.
func (m mapReader) Unseen(gvr schema.GroupVersionResource, ns, name string) bool {
	_, ok := m[readerKey(gvr, ns, name)]
	return !ok
}

func (mapReader) Read(schema.GroupVersionResource, *unstructured.Unstructured)          {}
func (mapReader) Wrote(schema.GroupVersionResource, *unstructured.Unstructured, string) {}
func (mapReader) Stale(schema.GroupVersionResource, string, string)                     {}
func (mapReader) Forget(schema.GroupVersionResource, string, string)                    {}

// BenchmarkReconcileConvergedChain is one reconcile of a converged
// instance of the engine benchmark's chain graph, every read answered by a
// Reader: no request at all, so what it measures is the reconciler's own
// work per pass (rendering, the desired hash, comparing, the status).
func BenchmarkReconcileConvergedChain(b *testing.B) {
	c := memcluster.New(memcluster.Options{})
	cs := c.ClientSet()
	rgds, err := graph.Parse([]byte(graphs.Chain("benchchain", "BenchChain")), "chain.yaml")
	if err != nil {
		b.Fatal(err)
	}
	g, err := graph.NewBuilder(graph.WithRESTMapper(cs.RESTMapper())).Build(rgds[0])
	if err != nil {
		b.Fatal(err)
	}
	crd, err := runtime.DefaultUnstructuredConverter.ToUnstructured(g.Instance.CRD)
	if err != nil {
		b.Fatal(err)
	}
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	ctx := context.Background()
	if _, err := cs.Dynamic().Resource(crdGVR).Create(ctx, &unstructured.Unstructured{Object: crd}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	inst := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kro.run/v1alpha1", "kind": "BenchChain",
		"metadata": map[string]any{"name": "app", "namespace": "default"}, "spec": map[string]any{},
	}}
	if _, err := cs.Dynamic().Resource(g.Instance.GVR).Namespace("default").Create(ctx, inst, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	ctl := reconciler.NewController(logr.Discard(), reconciler.ReconcileConfig{DefaultRequeueDuration: time.Second, DeletionGraceTimeDuration: time.Minute},
		g.Instance.GVR, g, cs, nil, metadata.NewGraphLabeler(g.Name, g.UID))
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "app"}}
	if err := ctl.Reconcile(ctx, req); err != nil {
		b.Fatalf("first reconcile: %v", err)
	}
	rd := mapReader{}
	u, err := cs.Dynamic().Resource(g.Instance.GVR).Namespace("default").Get(ctx, "app", metav1.GetOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if s, _, _ := unstructured.NestedString(u.Object, "status", "state"); s != reconciler.InstanceStateActive {
		b.Fatalf("instance is %q after the first reconcile, want ACTIVE", s)
	}
	rd[readerKey(g.Instance.GVR, "default", "app")] = u
	cm := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	for _, name := range []string{"app-a", "app-a-b", "app-a-b-c"} {
		u, err := cs.Dynamic().Resource(cm).Namespace("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			b.Fatal(err)
		}
		rd[readerKey(cm, "default", name)] = u
	}
	ctl.SetOptions(reconciler.Options{Reader: rd})
	before := fmt.Sprint(c.Writes())
	b.ReportAllocs()
	for b.Loop() {
		if err := ctl.Reconcile(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	if after := fmt.Sprint(c.Writes()); after != before {
		b.Fatalf("a converged reconcile wrote: %s -> %s", before, after)
	}
}
