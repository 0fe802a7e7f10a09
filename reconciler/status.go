package reconciler

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kroscope/kroscope/reconciler/client"
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

// conditions derives kro's built-in conditions from this reconcile's
// outcome: the three dependents, in kro's order; Ready is computed from
// them by rootCondition. kroscope's FAILED state (only a spec or graph
// change can help) is reported with kro's NotReady "resource error".
func (r *run) conditions() []condition {
	managed := condition{ConditionInstanceManaged, metav1.ConditionTrue, "Managed", msgManaged}
	if r.out.managedErr != nil {
		managed = condition{ConditionInstanceManaged, metav1.ConditionFalse, "ManagementFailed", "finalizer/labeling failed: " + r.out.managedErr.Error()}
	}
	resolved := condition{ConditionGraphResolved, metav1.ConditionTrue, "Resolved", msgResolved}
	if msg := r.graphProblem(); msg != "" {
		resolved = condition{ConditionGraphResolved, metav1.ConditionFalse, reasonResolveErr, msg}
	}

	resources := condition{Type: ConditionResourcesReady}
	set := func(s metav1.ConditionStatus, reason, msg string) {
		resources.Status, resources.Reason, resources.Message = s, reason, msg
	}
	switch {
	case r.out.deleting:
		msg := msgDeleting
		if len(r.out.orphanErrs) > 0 || r.hasErrorDetail() {
			msg = "deletion blocked: " + r.out.message
		}
		set(metav1.ConditionUnknown, reasonUnderDel, msg)
	case r.out.managedErr != nil:
		set(metav1.ConditionUnknown, reasonAwaiting, fmt.Sprintf("condition %q is awaiting reconciliation", ConditionResourcesReady))
	case r.out.suspended:
		set(metav1.ConditionFalse, reasonSuspended, suspendedMessage)
	case r.out.state == InstanceStateActive:
		set(metav1.ConditionTrue, "AllResourcesReady", msgAllReady)
	case r.out.state == InstanceStateError || r.out.state == InstanceStateFailed:
		set(metav1.ConditionFalse, reasonNotReady, "resource error: "+r.out.message)
	case r.childDeleting() != "":
		set(metav1.ConditionFalse, reasonDeleting, r.childDeleting())
	default:
		set(metav1.ConditionFalse, reasonNotReady, "awaiting resource readiness: "+r.out.message)
	}
	return []condition{managed, resolved, resources}
}

// graphProblem says why the graph cannot be resolved for this instance (a
// kind it uses is not served), or "".
func (r *run) graphProblem() string {
	for _, id := range r.c.rg.TopologicalOrder {
		if d := r.obs.details[id]; d.State == ResourceStateError && d.Err != nil && strings.Contains(d.Err.Error(), "is not served by the API server") {
			return d.Err.Error()
		}
	}
	return ""
}

func (r *run) hasErrorDetail() bool {
	for _, d := range r.obs.details {
		if d.State == ResourceStateError {
			return true
		}
	}
	return false
}

// childDeleting names, in kro's words, the first child that must finish
// deleting before the instance can go on, or "".
func (r *run) childDeleting() string {
	if r.out.pruning {
		return ""
	}
	for _, id := range r.c.rg.TopologicalOrder {
		if d := r.obs.details[id]; d.State == ResourceStateDeleting {
			ref := d.Name
			if d.Namespace != "" {
				ref = d.Namespace + "/" + ref
			}
			return fmt.Sprintf("resource %q for node %q is currently being deleted; waiting for deletion to complete before continuing reconciliation", ref, id)
		}
	}
	return ""
}

// wireCondition is one condition as written.
type wireCondition = map[string]any

// stampConditions turns the dependents into the written list, kro's way:
// lastTransitionTime is kept while a condition's status is unchanged, is
// "now" when it changes, and is the instance's creation time for a
// condition written the first time; Ready follows its dependents; the list
// is ordered by lastTransitionTime with Ready last.
func (r *run) stampConditions(deps []condition) []any {
	conds, _, _ := unstructured.NestedSlice(r.inst.Object, "status", "conditions")
	old := conditionsByType(conds)
	now := r.opts.Now().UTC().Format(time.RFC3339)
	created := r.inst.GetCreationTimestamp().UTC().Format(time.RFC3339)
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
			"observedGeneration": r.inst.GetGeneration(),
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

// wireState is the state written to the instance. SUSPENDED is kroscope's
// own: a paused instance keeps the state it had (IN_PROGRESS if none).
func (r *run) wireState() string {
	if r.out.state != InstanceStateSuspended {
		return r.out.state
	}
	if s, _, _ := unstructured.NestedString(r.inst.Object, "status", "state"); s != "" {
		return s
	}
	return InstanceStateInProgress
}

// buildStatus is the status kroscope wants on the instance: the projected
// fields, state and conditions.
func (r *run) buildStatus(projected map[string]any) map[string]any {
	status := map[string]any{}
	for k, v := range projected {
		if k != "state" && k != "conditions" {
			status[k] = v
		}
	}
	status["state"] = r.wireState()
	conds := r.stampConditions(r.conditions())
	status["conditions"] = conds
	if r.c.rg.HasConditions() { // the author's conditions replace the built-ins
		r.authorConditions(status, conds, r.opts.Now().UTC().Format(time.RFC3339))
	}
	r.redactConditions(status)
	return status
}

// statusPatch is the merge patch from live to want: every key of want, and
// null for the projected fields the graph declares but no longer yields.
// Fields neither kroscope nor the graph knows (someone else's) are not in
// the patch, so they survive.
func (r *run) statusPatch(live, want map[string]any) map[string]any {
	patch := map[string]any{}
	for k, v := range want {
		if _, there := live[k]; !there || !sameJSON(live[k], v) {
			patch[k] = v
		}
	}
	for _, f := range r.c.rg.Status {
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
func (r *run) writeStatus() (bool, error) {
	if r.observing() {
		return false, nil
	}
	status := r.buildStatus(r.projected())
	live, _, _ := unstructured.NestedMap(r.inst.Object, "status")
	patch := r.statusPatch(live, status)
	if len(patch) == 0 {
		return false, nil
	}
	// The resourceVersion makes the patch conditional: a status computed
	// from a stale instance (a lagging watch) is refused as a conflict
	// instead of being written.
	body, err := client.EncodeJSON(map[string]any{"metadata": map[string]any{"resourceVersion": r.inst.GetResourceVersion()}, "status": patch})
	if err != nil {
		return false, err
	}
	out, err := r.objs.Patch(r.ctx, r.c.gvr, r.inst.GetNamespace(), r.inst.GetName(), body, r.inst.GetResourceVersion(), "status")
	if err != nil {
		return false, fmt.Errorf("patching status of %s: %w", objectName(r.inst), err)
	}
	oldState, _ := live["state"].(string)
	oldMsg := conditionMessage(live, ConditionResourcesReady)
	r.inst = out
	r.announce(oldState, oldMsg)
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

// projected returns the status fields to write: evaluated on the normal
// path, carried over from the live status while deleting.
func (r *run) projected() map[string]any {
	if r.out.deleting || r.out.suspended {
		live, _, _ := unstructured.NestedMap(r.inst.Object, "status")
		return live
	}
	return r.out.projectedStatus
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
	case oldState == "" && (r.out.state == InstanceStateInProgress || r.out.state == InstanceStateActive):
		// A new instance's first state is news only when it is a problem:
		// an Event per new instance is noise that, at scale, competes with
		// the rollout for the API server and trails it by many seconds.
	case oldState != r.out.state:
		typ := corev1.EventTypeNormal
		if r.out.state == InstanceStateError || r.out.state == InstanceStateFailed {
			typ = corev1.EventTypeWarning
		}
		from := oldState
		if from == "" {
			from = "NEW"
		}
		r.event(typ, "State"+stateReason(r.out.state), fmt.Sprintf("%s -> %s: %s", from, r.out.state, r.out.message))
	case (r.out.state == InstanceStateError || r.out.state == InstanceStateFailed) && newMsg != oldMsg:
		r.event(corev1.EventTypeWarning, "State"+stateReason(r.out.state), r.out.message)
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
	case InstanceStateSuspended:
		return "Suspended"
	}
	return "Unknown"
}
