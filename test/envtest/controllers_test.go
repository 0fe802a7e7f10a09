package envtest

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestControllerStatus(t *testing.T) {
	obj := func(kind string, gen int64, spec, status map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": kind, "spec": spec}}
		if status != nil {
			u.Object["status"] = status
		}
		u.SetGeneration(gen)
		return u
	}
	for _, tc := range []struct {
		name  string
		u     *unstructured.Unstructured
		ok    bool
		check func(map[string]any) bool
	}{
		{"deployment without status", obj("Deployment", 2, map[string]any{"replicas": int64(3)}, nil), true, func(s map[string]any) bool {
			return s["availableReplicas"] == int64(3) && s["observedGeneration"] == int64(2) && len(s["conditions"].([]any)) == 1
		}},
		{"deployment, replicas defaulted", obj("Deployment", 1, map[string]any{}, nil), true, func(s map[string]any) bool { return s["readyReplicas"] == int64(1) }},
		{"deployment available", obj("Deployment", 2, map[string]any{"replicas": int64(3)}, map[string]any{"availableReplicas": int64(3), "observedGeneration": int64(2)}), false, nil},
		{"deployment of an older generation", obj("Deployment", 3, map[string]any{"replicas": int64(3)}, map[string]any{"availableReplicas": int64(3), "observedGeneration": int64(2)}), true, func(s map[string]any) bool {
			return s["observedGeneration"] == int64(3)
		}},
		{"job running", obj("Job", 1, map[string]any{}, nil), true, func(s map[string]any) bool {
			return s["succeeded"] == int64(1) && s["completionTime"] != nil && len(s["conditions"].([]any)) == 2
		}},
		{"job complete", obj("Job", 1, map[string]any{}, map[string]any{"completionTime": "2026-01-01T00:00:00Z"}), false, nil},
		{"configmap", obj("ConfigMap", 1, nil, nil), false, nil},
	} {
		s, ok := ControllerStatus(tc.u)
		if ok != tc.ok || (ok && !tc.check(s)) {
			t.Errorf("%s: %v %v", tc.name, ok, s)
		}
	}
}
