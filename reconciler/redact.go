package reconciler

import (
	"github.com/kroscope/kroscope/reconciler/graph"
)

// Redaction by value: a reconcile's Secret values (r.red, filled where
// objects become readable by expressions: setVar, setList, and the Secrets
// it renders: stampChild) are removed from every message at the points
// where messages leave the reconciler: the status conditions
// (redactConditions), Events (event), the log (the run's logger), the
// engine's Observation (observation) and Reconcile's error. What produced
// the message does not matter: a CEL error, an API server's rejection
// echoing a field, kroscope's own words. Values a graph projects into
// status fields are data the author chose to publish, as kro publishes
// them, and are not touched.

// redactConditions redacts the message and reason of every condition of
// status, the built-in ones and the author's.
func (r *run) redactConditions(status map[string]any) {
	if r.red.Empty() {
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
				m[k] = r.red.String(s)
			}
		}
	}
}

// redactedDetails are copies of the details with their messages and names
// redacted (the details themselves stay as the reconcile left them). The
// desired and observed objects are left whole: they are the cluster's
// data (the engine shares them with its cache), and the TUI masks a
// Secret's own.
func (r *run) redactedDetails() map[string]*ResourceDetail {
	if r.red.Empty() {
		return r.obs.details
	}
	out := make(map[string]*ResourceDetail, len(r.obs.details))
	for id, d := range r.obs.details {
		cp := *d
		// A name built from a value (refused by the API server, say)
		// shows in the engine's tables.
		cp.Name, cp.Namespace = r.red.String(d.Name), r.red.String(d.Namespace)
		cp.Err = r.red.Error(d.Err)
		cp.WaitingFor = r.red.String(d.WaitingFor)
		cp.ReadyChecks = r.redactedChecks(d.ReadyChecks)
		out[id] = &cp
	}
	return out
}

func (r *run) redactedChecks(cs []graph.Check) []graph.Check {
	if len(cs) == 0 {
		return cs
	}
	out := make([]graph.Check, len(cs))
	for i, c := range cs {
		c.Result = r.red.String(c.Result)
		ops := make([]graph.Operand, len(c.Operands))
		for j, o := range c.Operands {
			o.Value = r.red.Value(o.Value)
			ops[j] = o
		}
		c.Operands = ops
		out[i] = c
	}
	return out
}
