package envtest

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ControllerStatus is the status kube-controller-manager writes on a
// Deployment once all its replicas are available, or on a Job once it has
// completed: the test server runs no controllers, so tests write it, as
// kro's own integration tests do. ok is false for other kinds and for an
// object whose status already says so.
func ControllerStatus(u *unstructured.Unstructured) (status map[string]any, ok bool) {
	now := time.Now().UTC().Format(time.RFC3339)
	switch u.GetKind() {
	case "Deployment":
		replicas, found, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		if !found {
			replicas = 1
		}
		avail, _, _ := unstructured.NestedInt64(u.Object, "status", "availableReplicas")
		og, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		if avail == replicas && og == u.GetGeneration() {
			return nil, false
		}
		return map[string]any{
			"observedGeneration": u.GetGeneration(),
			"replicas":           replicas, "readyReplicas": replicas, "availableReplicas": replicas, "updatedReplicas": replicas,
			"conditions": []any{map[string]any{
				"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable", "message": "Deployment has minimum availability.",
				"lastUpdateTime": now, "lastTransitionTime": now,
			}},
		}, true
	case "Job":
		if _, done, _ := unstructured.NestedString(u.Object, "status", "completionTime"); done {
			return nil, false
		}
		cond := func(typ string) map[string]any {
			return map[string]any{"type": typ, "status": "True", "lastProbeTime": now, "lastTransitionTime": now}
		}
		return map[string]any{
			"startTime": now, "completionTime": now, "succeeded": int64(1),
			"conditions": []any{cond("SuccessCriteriaMet"), cond("Complete")},
		}, true
	}
	return nil, false
}

// Condition returns the status condition of type typ of u (which may be
// nil), or nil.
func Condition(u *unstructured.Unstructured, typ string) map[string]any {
	if u == nil {
		return nil
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			return m
		}
	}
	return nil
}
