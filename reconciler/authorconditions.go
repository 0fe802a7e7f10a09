package reconciler

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kroscope/kroscope/reconciler/graph/cellib"
)

// authorConditions puts the graph's status.conditions on status in place
// of the built-in conditions (builtin), as kro v0.9.3 does:
//   - an entry whose inputs are pending is skipped and the previously
//     written conditions of the types it did not give are kept;
//   - a failing entry or a duplicated type is dropped and the instance is
//     in ERROR, with the reason as its message;
//   - lastTransitionTime is kept while a condition's status is unchanged,
//     and observedGeneration is the instance's generation.
//
// While deleting, nothing is evaluated: the built-in ResourcesReady is
// written beside the previous author conditions. When the instance could
// not be marked managed, nothing was observed: the previous conditions stay.
func (s *statusWriter) authorConditions(out *outcome, status map[string]any, builtin []any, now string) {
	inst := s.inst.get()
	previous, _, _ := unstructured.NestedSlice(inst.Object, "status", "conditions")
	if out.keepsPreviousConditions() {
		status["conditions"] = keepPrevious([]any{}, previous)
		return
	}
	if out.isDeleting() {
		var current []any
		for _, c := range builtin {
			if m, _ := c.(map[string]any); m["type"] == ConditionResourcesReady {
				current = append(current, c)
			}
		}
		status["conditions"] = keepPrevious(current, previous)
		return
	}
	conds, incomplete, err := s.g.EvalConditions(s.obs.all(), builtinView(builtin))
	byType := conditionsByType(previous)
	written := make([]any, 0, len(conds))
	for _, c := range conds {
		written = append(written, authorCondition(c, byType[c.ConditionType], now, inst.GetGeneration()))
	}
	if incomplete {
		written = keepPrevious(written, previous)
	}
	status["conditions"] = written
	if err != nil {
		s.log.Info("status.conditions degraded: the instance is in ERROR", "error", err.Error())
		out.set(InstanceStateError, err.Error())
		status["state"] = out.state()
	}
}

// builtinView is the built-in conditions as runtime.condition(schema,
// type) reads them: by these fields only.
func builtinView(builtin []any) []any {
	view := make([]any, 0, len(builtin))
	for _, c := range builtin {
		m, _ := c.(map[string]any)
		view = append(view, map[string]any{"type": m["type"], "status": m["status"], "reason": m["reason"], "message": m["message"]})
	}
	return view
}

// conditionsByType indexes written conditions by their type.
func conditionsByType(conds []any) map[string]map[string]any {
	byType := map[string]map[string]any{}
	for _, p := range conds {
		if m, ok := p.(map[string]any); ok {
			if t, ok := m["type"].(string); ok {
				byType[t] = m
			}
		}
	}
	return byType
}

// authorCondition is one author condition as written: its
// lastTransitionTime kept from old (the condition of its type written
// before, or nil) while its status is unchanged.
func authorCondition(c cellib.Condition, old map[string]any, now string, generation int64) map[string]any {
	ltt := now
	if old != nil && old["status"] == c.Status {
		if t, ok := old["lastTransitionTime"].(string); ok && t != "" {
			ltt = t
		}
	}
	m := map[string]any{"type": c.ConditionType, "status": c.Status, "lastTransitionTime": ltt}
	// kro leaves empty strings out, and a zero generation.
	if c.Reason != "" {
		m["reason"] = c.Reason
	}
	if c.Message != "" {
		m["message"] = c.Message
	}
	if generation != 0 {
		m["observedGeneration"] = generation
	}
	return m
}

// keepPrevious appends to current the previous conditions of types it
// lacks.
func keepPrevious(current, previous []any) []any {
	have := map[any]bool{}
	for _, c := range current {
		if m, ok := c.(map[string]any); ok {
			have[m["type"]] = true
		}
	}
	for _, p := range previous {
		if m, ok := p.(map[string]any); ok && !have[m["type"]] {
			current = append(current, p)
		}
	}
	return current
}
