package engine

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kroscope/kroscope/engine/packed"
	"github.com/kroscope/kroscope/engine/state"
)

func instanceForStore() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kro.run/v1alpha1", "kind": "WebApp",
		"metadata": map[string]any{
			"name": "web", "namespace": "ns", "uid": "u1", "resourceVersion": "42", "generation": int64(3),
			"creationTimestamp": "2026-01-01T00:00:00Z", "finalizers": []any{"kro.run/finalizer"},
			"labels":      map[string]any{"kro.run/owned": "true"},
			"annotations": map[string]any{"kroscope.dev/requeue": "t1"},
			"managedFields": []any{map[string]any{"manager": "kroscope", "operation": "Apply", "apiVersion": "kro.run/v1alpha1",
				"time": "2026-01-01T00:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:spec": map[string]any{}}}},
		},
		"spec":   map[string]any{"replicas": int64(2), "image": "nginx"},
		"status": map[string]any{"state": "ACTIVE", "conditions": []any{map[string]any{"type": "Ready", "status": "True"}}},
	}}
}

// What the informer stores reads back as the instance (slim: no fieldsV1),
// and its typed metadata is what the handlers need.
func TestStoredInstanceRoundTrip(t *testing.T) {
	in := instanceForStore()
	want := in.DeepCopy()
	mf, _, _ := unstructured.NestedSlice(want.Object, "metadata", "managedFields")
	delete(mf[0].(map[string]any), "fieldsV1")
	_ = unstructured.SetNestedSlice(want.Object, mf, "metadata", "managedFields")

	obj, err := storeInstance(in)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := obj.(*storedInstance)
	if !ok {
		t.Fatalf("stored %T, want *storedInstance", obj)
	}
	m, gvk, ok := instanceMeta(s)
	if !ok || gvk.Kind != "WebApp" || gvk.GroupVersion().String() != "kro.run/v1alpha1" {
		t.Fatalf("instanceMeta = %v %v %v", m, gvk, ok)
	}
	if m.GetGeneration() != 3 || m.GetResourceVersion() != "42" || m.GetUID() != "u1" || m.GetLabels()["kro.run/owned"] != "true" ||
		m.GetAnnotations()["kroscope.dev/requeue"] != "t1" || len(m.GetFinalizers()) != 1 {
		t.Errorf("typed metadata lost fields: %+v", m)
	}
	if got := m.GetManagedFields(); len(got) != 1 || got[0].Manager != "kroscope" || got[0].FieldsV1 != nil {
		t.Errorf("managedFields = %+v, want kroscope's entry without fieldsV1", got)
	}
	u, ok := instanceObject(s)
	if !ok {
		t.Fatal("instanceObject failed")
	}
	if !equality.Semantic.DeepEqual(u.Object, want.Object) {
		t.Fatalf("decoded instance =\n%v\nwant\n%v", u.Object, want.Object)
	}
	// Each read is the caller's own: changing one changes neither the
	// store nor the next read.
	u.SetLabels(map[string]string{"changed": "yes"})
	_ = unstructured.SetNestedField(u.Object, "FAILED", "status", "state")
	again, _ := instanceObject(s)
	if again.GetLabels()["changed"] != "" || again.Object["status"].(map[string]any)["state"] != "ACTIVE" || s.Labels["changed"] != "" {
		t.Fatal("a decoded copy shares state with the store")
	}
	c := s.DeepCopyObject().(*storedInstance)
	c.Labels["x"] = "y"
	if s.Labels["x"] != "" {
		t.Fatal("DeepCopyObject shares the labels")
	}
}

// An instance kept as it came (the transform could not encode it) still
// reads as a copy.
func TestInstanceObjectOfUnstructured(t *testing.T) {
	in := instanceForStore()
	u, ok := instanceObject(in)
	if !ok || u == in || !equality.Semantic.DeepEqual(u.Object, in.Object) {
		t.Fatalf("instanceObject(unstructured) = %v, %v; want an equal copy", u, ok)
	}
	if _, _, ok := instanceMeta("not an object"); ok {
		t.Fatal("instanceMeta accepted a string")
	}
}

// A reconcile that renders what it rendered before, against the same
// observed object, keeps the encoding it has; anything else is encoded
// anew, relative to the observed object.
func TestPackDesiredReusesAnUnchangedEncoding(t *testing.T) {
	desired := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"}, "data": map[string]any{"k": "v"}}
	observed := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a", "uid": "u"}, "data": map[string]any{"k": "v"}}
	obs, _ := packed.Pack(observed)
	marker, _ := packed.Pack(map[string]any{"marker": "the old encoding"})
	old := &state.Resource{DesiredHash: "h1", Observed: obs, Desired: marker}

	same := &state.Resource{DesiredHash: "h1", Observed: obs}
	if got := packDesired(desired, observed, same, old); !got.Equal(marker) {
		t.Error("same hash and observed bytes: the old encoding was not reused")
	}
	changed := &state.Resource{DesiredHash: "h2", Observed: obs}
	got := packDesired(desired, observed, changed, old)
	changed.Desired = got
	if got.Equal(marker) || !equality.Semantic.DeepEqual(changed.DesiredObject(), desired) {
		t.Errorf("new hash: got %v, want the new desired object", changed.DesiredObject())
	}
	if first := packDesired(desired, observed, &state.Resource{Observed: obs}, nil); !first.Equal(got) {
		t.Error("without a previous value the encoding differs")
	}
}
