package reconciler

import (
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/redact"
)

// Redaction by value: a reconcile's Secret values (its redact.Set, filled
// where objects become readable by expressions: observations.record, and
// the Secrets it renders: writer.stamp) are removed from every message at
// the points where messages leave the reconciler: the status conditions
// (redactConditions), Events (events.event), the log (the run's logger),
// the engine's Observation (run.observation) and Reconcile's error. What produced
// the message does not matter: a CEL error, an API server's rejection
// echoing a field, kroscope's own words. Values a graph projects into
// status fields are data the author chose to publish, as kro publishes
// them, and are not touched.

// redactConditions redacts the message and reason of every condition of
// status, the built-in ones and the author's.
func redactConditions(red *redact.Set, status map[string]any) {
	if red.Empty() {
		return
	}
	conds, _ := status["conditions"].([]any)
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		for _, k := range []string{"message", "reason"} {
			if s, ok := m[k].(string); ok {
				m[k] = red.String(s)
			}
		}
	}
}

// redactedDetails are copies of the details with their messages and names
// redacted (the details themselves stay as the reconcile left them). The
// desired and observed objects are left whole: they are the cluster's
// data (the engine shares them with its cache), and the TUI masks a
// Secret's own.
func redactedDetails(red *redact.Set, details map[string]*ResourceDetail) map[string]*ResourceDetail {
	if red.Empty() {
		return details
	}
	out := make(map[string]*ResourceDetail, len(details))
	for id, d := range details {
		cp := *d
		// A name built from a value (refused by the API server, say)
		// shows in the engine's tables.
		cp.Name, cp.Namespace = red.String(d.Name), red.String(d.Namespace)
		cp.Err = red.Error(d.Err)
		cp.WaitingFor = red.String(d.WaitingFor)
		cp.ReadyChecks = redactedChecks(red, d.ReadyChecks)
		out[id] = &cp
	}
	return out
}

func redactedChecks(red *redact.Set, cs []graph.Check) []graph.Check {
	if len(cs) == 0 {
		return cs
	}
	out := make([]graph.Check, len(cs))
	for i, c := range cs {
		c.Result = red.String(c.Result)
		ops := make([]graph.Operand, len(c.Operands))
		for j, o := range c.Operands {
			o.Value = red.Value(o.Value)
			ops[j] = o
		}
		c.Operands = ops
		out[i] = c
	}
	return out
}
