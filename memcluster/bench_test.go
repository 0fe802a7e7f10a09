package memcluster

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// BenchmarkApplyCreate measures a server-side apply that creates a
// Deployment: the reconciler's most common write.
func BenchmarkApplyCreate(b *testing.B) {
	c := New(Options{})
	d := c.Dynamic().Resource(deployGVR).Namespace("default")
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON([]byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x","namespace":"default","labels":{"kro.run/owned":"true"}},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		obj.SetName(fmt.Sprintf("web-%d", i))
		if _, err := d.Apply(context.Background(), obj.GetName(), obj, metav1.ApplyOptions{FieldManager: "kroscope"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApplyNoop measures re-applying an unchanged object (a converged
// instance's reconcile).
func BenchmarkApplyNoop(b *testing.B) {
	c := New(Options{})
	d := c.Dynamic().Resource(deployGVR).Namespace("default")
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON([]byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`)); err != nil {
		b.Fatal(err)
	}
	if _, err := d.Apply(context.Background(), "web", obj, metav1.ApplyOptions{FieldManager: "kroscope"}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Apply(context.Background(), "web", obj, metav1.ApplyOptions{FieldManager: "kroscope"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStatusMergePatch measures a merge patch of a Deployment's status
// (the reconciler writes instance status this way, the simulator Services).
func BenchmarkStatusMergePatch(b *testing.B) {
	c := New(Options{})
	d := c.Dynamic().Resource(deployGVR).Namespace("default")
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON([]byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default","labels":{"kro.run/owned":"true"}},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx","env":[{"name":"A","value":"1"},{"name":"B","value":"2"}]}]}}}}`)); err != nil {
		b.Fatal(err)
	}
	if _, err := d.Apply(context.Background(), "web", obj, metav1.ApplyOptions{FieldManager: "kroscope"}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		patch := fmt.Sprintf(`{"status":{"observedGeneration":1,"replicas":2,"readyReplicas":%d}}`, i%3)
		if _, err := d.Patch(context.Background(), "web", types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "kroscope"}, "status"); err != nil {
			b.Fatal(err)
		}
	}
}
