package reconciler

import (
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Condition types kroscope writes on instances: Ready is the root, true
// when the three others are.
const (
	ConditionReady           = "Ready"
	ConditionInstanceManaged = "InstanceManaged"
	ConditionGraphResolved   = "GraphResolved"
	ConditionResourcesReady  = "ResourcesReady"
)

type condition struct {
	Type    string
	Status  metav1.ConditionStatus
	Reason  string
	Message string
}

// conditions derives the built-in conditions from this reconcile's outcome.
func (r *run) conditions() []condition {
	managed := condition{ConditionInstanceManaged, metav1.ConditionTrue, "Managed", "finalizer and labels are set"}
	if r.managedErr != nil {
		managed = condition{ConditionInstanceManaged, metav1.ConditionFalse, "ManagementFailed", r.managedErr.Error()}
	}
	resolved := condition{ConditionGraphResolved, metav1.ConditionTrue, "Resolved",
		fmt.Sprintf("graph %s (generation %d) is loaded", r.c.rg.Name, r.c.rg.Generation)}

	resources := condition{Type: ConditionResourcesReady}
	switch {
	case r.managedErr != nil:
		resources.Status, resources.Reason, resources.Message = metav1.ConditionUnknown, "AwaitingReconciliation", "the instance is not managed yet"
	case r.deleting:
		resources.Status, resources.Reason, resources.Message = metav1.ConditionFalse, "Deleting", r.message
	case r.state == InstanceStateActive:
		resources.Status, resources.Reason = metav1.ConditionTrue, "AllResourcesReady"
		resources.Message = fmt.Sprintf("all %d resources are ready", len(r.c.rg.TopologicalOrder))
	case r.state == InstanceStateError:
		resources.Status, resources.Reason, resources.Message = metav1.ConditionFalse, "ResourceError", "resource error: "+r.message
	case r.state == InstanceStateFailed:
		resources.Status, resources.Reason, resources.Message = metav1.ConditionFalse, "Failed", "failed (fix the instance spec or the graph): "+r.message
	default:
		resources.Status, resources.Reason, resources.Message = metav1.ConditionFalse, "NotReady", "awaiting resource readiness: "+r.message
	}

	ready := condition{ConditionReady, metav1.ConditionTrue, "Ready", "the instance is ready"}
	for _, c := range []condition{managed, resolved, resources} {
		if c.Status != metav1.ConditionTrue {
			ready = condition{ConditionReady, c.Status, c.Reason, c.Message}
			break
		}
	}
	return []condition{managed, resolved, resources, ready}
}

// buildStatus is the whole status kroscope wants on the instance: the
// projected fields, state and conditions. lastTransitionTime is carried
// over from the live status for every condition whose status is unchanged.
func (r *run) buildStatus(projected map[string]any) map[string]any {
	old := map[string]map[string]any{}
	if conds, ok, _ := unstructured.NestedSlice(r.inst.Object, "status", "conditions"); ok {
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok {
				if t, ok := m["type"].(string); ok {
					old[t] = m
				}
			}
		}
	}
	now := r.now().UTC().Format(time.RFC3339)
	var conds []any
	for _, c := range r.conditions() {
		ltt := now
		if o := old[c.Type]; o != nil && o["status"] == string(c.Status) {
			if t, ok := o["lastTransitionTime"].(string); ok && t != "" {
				ltt = t
			}
		}
		conds = append(conds, map[string]any{
			"type":               c.Type,
			"status":             string(c.Status),
			"reason":             c.Reason,
			"message":            c.Message,
			"lastTransitionTime": ltt,
			"observedGeneration": r.inst.GetGeneration(),
		})
	}
	status := map[string]any{}
	for k, v := range projected {
		if k != "state" && k != "conditions" {
			status[k] = v
		}
	}
	status["state"] = r.state
	status["conditions"] = conds
	if r.c.rg.HasConditions() {
		r.authorConditions(status, conds, now)
	}
	return status
}

// writeStatus writes the status when it differs from the live one (compared
// as JSON, so int/float noise does not count). It also emits the Events for
// the change, so nothing is written or announced when nothing changed.
func (r *run) writeStatus() (bool, error) {
	if r.opts.Observe {
		return false, nil
	}
	status := r.buildStatus(r.projected())
	live, _, _ := unstructured.NestedMap(r.inst.Object, "status")
	a, err := json.Marshal(live)
	if err != nil {
		return false, err
	}
	b, err := json.Marshal(status)
	if err != nil {
		return false, err
	}
	if string(a) == string(b) {
		return false, nil
	}
	out, err := r.cs.Dynamic().Resource(r.c.gvr).Namespace(r.inst.GetNamespace()).
		UpdateStatus(r.ctx, withStatus(r.inst, status), metav1.UpdateOptions{FieldManager: "kroscope"})
	if err != nil {
		return false, fmt.Errorf("updating status of %s: %w", objectName(r.inst), err)
	}
	oldState, _ := live["state"].(string)
	oldMsg := conditionMessage(live, ConditionResourcesReady)
	r.wrote(r.c.gvr, out, r.inst.GetResourceVersion())
	r.inst = out
	r.announce(oldState, oldMsg)
	return true, nil
}

// projected returns the status fields to write: evaluated on the normal
// path, carried over from the live status while deleting.
func (r *run) projected() map[string]any {
	if r.deleting {
		live, _, _ := unstructured.NestedMap(r.inst.Object, "status")
		return live
	}
	return r.projectedStatus
}

func conditionMessage(status map[string]any, typ string) string {
	conds, _ := status["conditions"].([]any)
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			s, _ := m["message"].(string)
			return s
		}
	}
	return ""
}

// announce emits Events for a state change, and for a new error message
// while in ERROR/FAILED. It is called only after a status write, which
// happens only on change, so Events never repeat.
func (r *run) announce(oldState, oldMsg string) {
	newMsg := conditionMessage(r.inst.Object["status"].(map[string]any), ConditionResourcesReady)
	switch {
	case oldState == "" && (r.state == InstanceStateInProgress || r.state == InstanceStateActive):
		// A new instance's first state is news only when it is a problem:
		// an Event per new instance is noise that, at scale, competes with
		// the rollout for the API server and trails it by many seconds.
	case oldState != r.state:
		typ := corev1.EventTypeNormal
		if r.state == InstanceStateError || r.state == InstanceStateFailed {
			typ = corev1.EventTypeWarning
		}
		from := oldState
		if from == "" {
			from = "NEW"
		}
		r.event(typ, "State"+stateReason(r.state), fmt.Sprintf("%s -> %s: %s", from, r.state, r.message))
	case (r.state == InstanceStateError || r.state == InstanceStateFailed) && newMsg != oldMsg:
		r.event(corev1.EventTypeWarning, "State"+stateReason(r.state), r.message)
	}
}

func stateReason(s string) string {
	switch s {
	case InstanceStateActive:
		return "Active"
	case InstanceStateInProgress:
		return "InProgress"
	case InstanceStateError:
		return "Error"
	case InstanceStateFailed:
		return "Failed"
	case InstanceStateDeleting:
		return "Deleting"
	}
	return "Unknown"
}
