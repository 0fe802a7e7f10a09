package e2e

import (
	"context"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/kroscope/kroscope/test/envtest"
)

// TestHarnessIsARealAPIServer proves the harness: a CRD becomes Established,
// a custom object arrives through a watch, and a finalizer holds deletion
// (deletionTimestamp set, object still there) until it is removed. Only a
// real API server has these semantics.
func TestHarnessIsARealAPIServer(t *testing.T) {
	env := envtest.Start(t)
	ns := env.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.smoke.kroscope.dev"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "smoke.kroscope.dev",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"size": {Type: "integer"}}},
					},
				}},
			}},
		},
	}
	env.InstallCRDs(t, crd)

	gvr := schema.GroupVersionResource{Group: "smoke.kroscope.dev", Version: "v1", Resource: "widgets"}
	dyn := dynamic.NewForConfigOrDie(env.Config).Resource(gvr).Namespace(ns)
	w, err := dyn.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()

	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "smoke.kroscope.dev/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w1", "finalizers": []any{"kroscope.dev/smoke"}},
		"spec":     map[string]any{"size": int64(3)},
	}}
	if _, err := dyn.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	waitEvent(t, w, watch.Added, "w1")

	// Schema validation is the server's: a string where an integer belongs is refused.
	bad := obj.DeepCopy()
	bad.SetName("bad")
	bad.Object["spec"] = map[string]any{"size": "big"}
	if _, err := dyn.Create(ctx, bad, metav1.CreateOptions{}); err == nil {
		t.Fatalf("the API server accepted spec.size=\"big\"; it must validate against the CRD schema")
	}

	if err := dyn.Delete(ctx, "w1", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	waitEvent(t, w, watch.Modified, "w1")
	got, err := dyn.Get(ctx, "w1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the finalizer must keep the object after delete: %v", err)
	}
	if got.GetDeletionTimestamp() == nil {
		t.Fatalf("deletionTimestamp not set on an object held by a finalizer")
	}

	got.SetFinalizers(nil)
	if _, err := dyn.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("removing the finalizer: %v", err)
	}
	waitEvent(t, w, watch.Deleted, "w1")
	if _, err := dyn.Get(ctx, "w1", metav1.GetOptions{}); err == nil {
		t.Fatalf("object still present after its last finalizer was removed")
	}
}

func waitEvent(t *testing.T, w watch.Interface, typ watch.EventType, name string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed while waiting for %s %s", typ, name)
			}
			if u, ok := ev.Object.(*unstructured.Unstructured); ok && ev.Type == typ && u.GetName() == name {
				return
			}
		case <-timeout:
			t.Fatalf("no %s event for %s within 30s", typ, name)
		}
	}
}
