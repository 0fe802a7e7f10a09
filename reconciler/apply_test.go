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

	"github.com/kroscope/kroscope/reconciler/metadata"
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

// kroAdoption: an apply over kro's child of this instance forces at once
// (one write, not a refused one and a forced one); any other manager
// leaves it to the conflict, which names it.
func TestKroAdoption(t *testing.T) {
	const uid = "inst-1"
	child := func(owned bool, entries ...metav1.ManagedFieldsEntry) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		if owned {
			u.SetLabels(map[string]string{metadata.OwnedLabel: "true", metadata.InstanceIDLabel: uid})
		}
		u.SetManagedFields(entries)
		return u
	}
	kroApply := metav1.ManagedFieldsEntry{Manager: metadata.KroApplyManager, Operation: metav1.ManagedFieldsOperationApply}
	kroLabels := metav1.ManagedFieldsEntry{Manager: metadata.KroLabelManager, Operation: metav1.ManagedFieldsOperationUpdate}
	mine := metav1.ManagedFieldsEntry{Manager: metadata.FieldManager, Operation: metav1.ManagedFieldsOperationApply}
	status := metav1.ManagedFieldsEntry{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status"}
	edit := metav1.ManagedFieldsEntry{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate}
	argo := metav1.ManagedFieldsEntry{Manager: "argocd", Operation: metav1.ManagedFieldsOperationApply}
	for _, tc := range []struct {
		name string
		obj  *unstructured.Unstructured
		want []string
	}{
		{"kro's child of this instance", child(true, kroApply, kroLabels, status), []string{metadata.KroApplyManager, metadata.KroLabelManager}},
		{"already kroscope's too", child(true, mine, kroApply), []string{metadata.KroApplyManager}},
		{"kroscope's alone: nothing to adopt", child(true, mine), nil},
		{"not this instance's", child(false, kroApply), nil},
		{"an imperative edit too: the conflict names it", child(true, kroApply, edit), nil},
		{"another applier too", child(true, kroApply, argo), nil},
	} {
		if got := kroAdoption(tc.obj, uid); !slices.Equal(got, tc.want) {
			t.Errorf("%s: kroAdoption = %v, want %v", tc.name, got, tc.want)
		}
	}
}
