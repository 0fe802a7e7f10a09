package slim

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func object() *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "a", "labels": map[string]any{"l": "v"}, "managedFields": []any{
			map[string]any{"manager": "kroscope", "operation": "Apply", "subresource": "status", "time": "2026-01-01T00:00:00Z",
				"fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:data": map[string]any{}}},
		}},
		"data": map[string]any{"k": "v"},
	}}
	return u
}

func TestViewDropsOnlyFieldSets(t *testing.T) {
	in := object()
	before := in.DeepCopy()
	out := View(in)
	if !equality.Semantic.DeepEqual(in.Object, before.Object) {
		t.Fatal("View changed its input")
	}
	mf := out.GetManagedFields()
	if len(mf) != 1 || mf[0].FieldsV1 != nil {
		t.Fatalf("managedFields = %+v, want one entry without fieldsV1", mf)
	}
	if mf[0].Manager != "kroscope" || mf[0].Operation != "Apply" || mf[0].Subresource != "status" || mf[0].Time == nil {
		t.Errorf("entry lost who wrote it: %+v", mf[0])
	}
	// Apart from fieldsV1 the view is the object.
	Unstructured(before)
	if !equality.Semantic.DeepEqual(out.Object, before.Object) {
		t.Errorf("View = %v, want %v", out.Object, before.Object)
	}
	// An object without managedFields is its own view.
	plain := &unstructured.Unstructured{Object: map[string]any{"kind": "ConfigMap", "metadata": map[string]any{"name": "a"}}}
	if View(plain) != plain {
		t.Error("View copied an object that has no managedFields")
	}
}

func TestTransform(t *testing.T) {
	u := object()
	if _, err := Transform(u); err != nil {
		t.Fatal(err)
	}
	if mf := u.GetManagedFields(); len(mf) != 1 || mf[0].FieldsV1 != nil || mf[0].Manager != "kroscope" {
		t.Errorf("unstructured: managedFields = %+v, want the entry without fieldsV1", mf)
	}
	m := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{
		Name: "a", Namespace: "ns", UID: "u1", ResourceVersion: "7", Generation: 2, Labels: map[string]string{"l": "v"},
		Annotations: map[string]string{"big": "annotation"}, Finalizers: []string{"f"},
		OwnerReferences: []metav1.OwnerReference{{Kind: "X", Name: "x", UID: "o1"}}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "x"}}}}
	out, err := Transform(m)
	if err != nil {
		t.Fatal(err)
	}
	want := &metav1.PartialObjectMetadata{TypeMeta: m.TypeMeta, ObjectMeta: metav1.ObjectMeta{
		Name: "a", Namespace: "ns", UID: "u1", ResourceVersion: "7", Labels: map[string]string{"l": "v"}}}
	if !equality.Semantic.DeepEqual(out, want) {
		t.Errorf("metadata: kept %+v, want only identity, version and labels: %+v", out, want)
	}
}

func TestTransformKeepsLabels(t *testing.T) {
	in := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"kro.run/owned": "true", "app": "x"}}}
	u := object()
	out, _ := Transform(in)
	m := out.(*metav1.PartialObjectMetadata)
	_, _ = Transform(u)
	if got := m.GetLabels(); len(got) != 2 || got["kro.run/owned"] != "true" || got["app"] != "x" {
		t.Errorf("metadata labels = %v", got)
	}
	if got := u.GetLabels(); len(got) != 1 || got["l"] != "v" {
		t.Errorf("unstructured labels = %v", got)
	}
}

// WithoutManagedFields drops them from a copy and leaves the original as
// it was; an object without them is returned as is.
func TestWithoutManagedFields(t *testing.T) {
	obj := map[string]any{"kind": "ConfigMap", "metadata": map[string]any{"name": "a",
		"managedFields": []any{map[string]any{"manager": "kro"}}}, "data": map[string]any{"k": "v"}}
	out := WithoutManagedFields(obj)
	if _, has := out["metadata"].(map[string]any)["managedFields"]; has {
		t.Error("managedFields kept")
	}
	if out["metadata"].(map[string]any)["name"] != "a" || out["data"] == nil || out["kind"] != "ConfigMap" {
		t.Errorf("other fields lost: %v", out)
	}
	if _, has := obj["metadata"].(map[string]any)["managedFields"]; !has {
		t.Error("the original changed")
	}
	plain := map[string]any{"metadata": map[string]any{"name": "b"}}
	if got := WithoutManagedFields(plain); len(got) != 1 || got["metadata"].(map[string]any)["name"] != "b" {
		t.Errorf("object without managedFields: %v", got)
	}
	if WithoutManagedFields(nil) != nil {
		t.Error("nil")
	}
}
