package reconciler

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func conflictErr(managers ...string) error {
	var causes []metav1.StatusCause
	for _, m := range managers {
		causes = append(causes, metav1.StatusCause{Type: metav1.CauseTypeFieldManagerConflict,
			Message: fmt.Sprintf("conflict with %q using v1", m), Field: ".data.value"})
	}
	err := apierrors.NewApplyConflict(causes, "Apply failed with conflicts")
	return fmt.Errorf("wrapped: %w", err)
}

func TestConflictManagers(t *testing.T) {
	got := conflictManagers(conflictErr("kubectl-edit", "helm", "kubectl-edit"))
	if !slices.Equal(got, []string{"kubectl-edit", "helm"}) {
		t.Errorf("conflictManagers = %v", got)
	}
	plain := apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "x", errors.New(`Apply failed with 1 conflict: conflict with "argo" using v1: .data.value`))
	if got := conflictManagers(plain); !slices.Equal(got, []string{"argo"}) {
		t.Errorf("conflictManagers from message = %v", got)
	}
}

func TestApplyManagers(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: "kroscope", Operation: metav1.ManagedFieldsOperationApply},
		{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate},
		{Manager: "argo", Operation: metav1.ManagedFieldsOperationApply},
	})
	cases := map[string][]string{
		"kubectl-edit": nil,       // an imperative edit is drift
		"argo":         {"argo"},  // another declarative owner
		"ghost":        {"ghost"}, // unknown: the safe side
	}
	for m, want := range cases {
		if got := applyManagers(obj, []string{m}); !slices.Equal(got, want) {
			t.Errorf("applyManagers(%s) = %v, want %v", m, got, want)
		}
	}
}

// setMetadataStrings leaves what GetLabels, maps.Copy and SetLabels left.
func TestSetMetadataStringsAsGetCopySet(t *testing.T) {
	objs := []map[string]any{
		{"metadata": map[string]any{"name": "a"}},
		{"metadata": map[string]any{"name": "a", "labels": nil}},
		{"metadata": map[string]any{"name": "a", "labels": map[string]any{"team": "x", "kro.run/node-id": "old"}}},
		{"metadata": map[string]any{"name": "a", "labels": map[string]any{"n": int64(1), "team": "x"}}},
		{"metadata": map[string]any{"name": "a", "labels": "not a map"}},
		{},
	}
	kv := map[string]string{"kro.run/node-id": "b", "kro.run/owned": "true"}
	for _, o := range objs {
		want := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(o)}
		l := want.GetLabels()
		if l == nil {
			l = map[string]string{}
		}
		maps.Copy(l, kv)
		want.SetLabels(l)
		got := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(o)}
		setMetadataStrings(got, "labels", kv)
		if !reflect.DeepEqual(got.Object, want.Object) {
			t.Errorf("%v:\n got %v\nwant %v", o, got.Object, want.Object)
		}
	}
}
