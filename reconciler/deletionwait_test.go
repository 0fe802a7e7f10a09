package reconciler

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestHeldByNamesTheFinalizer(t *testing.T) {
	cm := func(name string, fins ...string) unstructured.Unstructured {
		u := unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
		u.SetName(name)
		u.SetNamespace("demo")
		u.SetFinalizers(fins)
		ts := metav1.Now()
		u.SetDeletionTimestamp(&ts)
		return u
	}
	if got := heldBy([]unstructured.Unstructured{cm("free")}); got != "" {
		t.Fatalf("no finalizer, got %q", got)
	}
	got := heldBy([]unstructured.Unstructured{cm("free"), cm("held", "example.com/hold", "other/x")})
	if want := "held by finalizers example.com/hold, other/x (ConfigMap demo/held)"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
