package reconciler

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/redact"
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

// kro's condition messages, word for word, so scripts and dashboards that
// read kro's instances read kroscope's the same.
const (
	msgManaged       = "instance is properly managed with finalizers and labels"
	msgResolved      = "runtime graph created and all resources resolved"
	msgAllReady      = "all resources are created and ready"
	msgDeleting      = "deleting resources"
	reasonAwaiting   = "AwaitingReconciliation"
	reasonReady      = "Ready"
	reasonNotReady   = "NotReady"
	reasonSuspended  = "ReconciliationSuspended"
	reasonDeleting   = "ResourceDeleting"
	reasonUnderDel   = "UnderDeletion"
	reasonResolveErr = "ResolutionFailed"
)

// statusWriter writes the instance's status: the fields the graph
// projects, the state, and kro's conditions (or the author's), each
// derived from the outcome and the observations, and announces a change
// with an Event. Nothing is written, or announced, when nothing changed.
type statusWriter struct {
	inst *instance
	obs  *observations
	io   reach
	g    *graph.Graph
	ev   *events
	red  *redact.Set
	log  logr.Logger
	now  func() time.Time
}

// conditions derives kro's built-in conditions from this reconcile's
// outcome: the three dependents, in kro's order; Ready is computed from
// them by rootCondition.
func (s *statusWriter) conditions(out *outcome) []condition {
	resolved := condition{ConditionGraphResolved, metav1.ConditionTrue, "Resolved", msgResolved}
	if msg := s.obs.graphProblem(); msg != "" {
		resolved = condition{ConditionGraphResolved, metav1.ConditionFalse, reasonResolveErr, msg}
	}
	return []condition{out.managedCondition(), resolved, out.resourcesReady(s.obs.childDeleting)}
}

// wireCondition is one condition as written.
type wireCondition = map[string]any

// stampConditions turns the dependents into the written list, kro's way:
// lastTransitionTime is kept while a condition's status is unchanged, is
// "now" when it changes, and is the instance's creation time for a
// condition written the first time; Ready follows its dependents; the list
// is ordered by lastTransitionTime with Ready last.
func (s *statusWriter) stampConditions(deps []condition) []any {
	inst := s.inst.get()
	conds, _, _ := unstructured.NestedSlice(inst.Object, "status", "conditions")
	old := conditionsByType(conds)
	now := s.now().UTC().Format(time.RFC3339)
	created := inst.GetCreationTimestamp().UTC().Format(time.RFC3339)
	stamp := func(c condition) wireCondition {
		ltt := created
		if o := old[c.Type]; o != nil {
			ltt = now
			if t, ok := o["lastTransitionTime"].(string); ok && t != "" && o["status"] == string(c.Status) {
				ltt = t
			}
		}
		return wireCondition{
			"type":               c.Type,
			"status":             string(c.Status),
			"reason":             c.Reason,
			"message":            c.Message,
			"lastTransitionTime": ltt,
			"observedGeneration": inst.GetGeneration(),
		}
	}
	var out []wireCondition
	for _, c := range deps {
		out = append(out, stamp(c))
	}
	out = append(out, stamp(rootCondition(out)))
	slices.SortStableFunc(out, func(a, b wireCondition) int {
		if a["type"] == ConditionReady || b["type"] == ConditionReady {
			switch {
			case a["type"] == b["type"]:
				return 0
			case a["type"] == ConditionReady:
				return 1
			}
			return -1
		}
		return strings.Compare(a["lastTransitionTime"].(string), b["lastTransitionTime"].(string))
	})
	list := make([]any, len(out))
	for i, c := range out {
		list[i] = c
	}
	return list
}

// rootCondition is Ready: True when every dependent is; otherwise a copy
// of the most recently changed False dependent, or if none is False, of
// the most recently changed Unknown one.
func rootCondition(deps []wireCondition) condition {
	newest := func(status string) wireCondition {
		var best wireCondition
		for _, d := range deps {
			if d["status"] != status {
				continue
			}
			if best == nil || d["lastTransitionTime"].(string) > best["lastTransitionTime"].(string) {
				best = d
			}
		}
		return best
	}
	for _, s := range []metav1.ConditionStatus{metav1.ConditionFalse, metav1.ConditionUnknown} {
		if d := newest(string(s)); d != nil {
			return condition{ConditionReady, s, d["reason"].(string), d["message"].(string)}
		}
	}
	return condition{ConditionReady, metav1.ConditionTrue, reasonReady, ""}
}

// buildStatus is the status kroscope wants on the instance: the projected
// fields, state and conditions.
func (s *statusWriter) buildStatus(out *outcome, projected map[string]any) map[string]any {
	status := map[string]any{}
	for k, v := range projected {
		if k != "state" && k != "conditions" {
			status[k] = v
		}
	}
	live, _, _ := unstructured.NestedString(s.inst.get().Object, "status", "state")
	status["state"] = out.wireState(live)
	conds := s.stampConditions(s.conditions(out))
	status["conditions"] = conds
	if s.g.HasConditions() { // the author's conditions replace the built-ins
		s.authorConditions(out, status, conds, s.now().UTC().Format(time.RFC3339))
	}
	redactConditions(s.red, status)
	return status
}

// statusPatch is the merge patch from live to want: every key of want, and
// null for the projected fields the graph declares but no longer yields.
// Fields neither kroscope nor the graph knows (someone else's) are not in
// the patch, so they survive.
func (s *statusWriter) statusPatch(live, want map[string]any) map[string]any {
	patch := map[string]any{}
	for k, v := range want {
		if _, there := live[k]; !there || !sameJSON(live[k], v) {
			patch[k] = v
		}
	}
	for _, f := range s.g.Status {
		if len(f.Segments) == 0 {
			continue
		}
		top, _ := f.Segments[0].(string)
		if top == "status" && len(f.Segments) > 1 {
			top, _ = f.Segments[1].(string)
		}
		if _, ok := want[top]; !ok && top != "" {
			if _, there := live[top]; there {
				patch[top] = nil
			}
		}
	}
	return patch
}

// writeStatus patches the status when it differs from the live one
// (compared as JSON, so int/float noise does not count): a JSON merge
// patch of the status subresource, guarded by the resourceVersion, so
// fields others write survive. It
// also emits the Events for the change, so nothing is written or announced
// when nothing changed.
func (s *statusWriter) write(out *outcome) (bool, error) {
	if s.io.observe {
		return false, nil
	}
	inst := s.inst.get()
	live, _, _ := unstructured.NestedMap(inst.Object, "status")
	status := s.buildStatus(out, out.statusFields(live))
	patch := s.statusPatch(live, status)
	if len(patch) == 0 {
		return false, nil
	}
	// The resourceVersion makes the patch conditional: a status computed
	// from a stale instance (a lagging watch) is refused as a conflict
	// instead of being written.
	body, err := client.EncodeJSON(map[string]any{"metadata": map[string]any{"resourceVersion": inst.GetResourceVersion()}, "status": patch})
	if err != nil {
		return false, err
	}
	written, err := s.io.objs.Patch(s.io.ctx, s.inst.resource(), inst.GetNamespace(), inst.GetName(), body, inst.GetResourceVersion(), "status")
	if err != nil {
		return false, fmt.Errorf("patching status of %s: %w", objectName(inst), err)
	}
	oldState, _ := live["state"].(string)
	oldMsg := conditionMessage(live, ConditionResourcesReady)
	s.inst.set(written)
	newMsg := conditionMessage(written.Object["status"].(map[string]any), ConditionResourcesReady)
	if typ, reason, msg, ok := out.announcement(oldState, oldMsg, newMsg); ok {
		s.ev.event(typ, reason, msg)
	}
	return true, nil
}

// sameJSON compares as JSON, so int64/float64 noise never counts: true
// when both encode to the same JSON text. Maps, lists, strings and
// booleans are compared directly; any other pair (numbers of two types,
// say) by their encodings.
func sameJSON(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return encodedSame(a, b)
		}
		if (x == nil) != (y == nil) || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, there := y[k]
			if !there || !sameJSON(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok {
			return encodedSame(a, b)
		}
		if (x == nil) != (y == nil) || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	case string:
		if y, ok := b.(string); ok && x == y {
			return true
		}
	case bool:
		if y, ok := b.(bool); ok {
			return x == y
		}
	}
	return encodedSame(a, b)
}

func encodedSame(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
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
	case InstanceStateSuspended:
		return "Suspended"
	}
	return "Unknown"
}
