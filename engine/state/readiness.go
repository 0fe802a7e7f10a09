package state

// ReadyCheck is one readyWhen condition of a waiting resource, judged with
// the values of the fields it reads, so the screen can say which condition
// is false and why ("availableReplicas=1, replicas=1").
type ReadyCheck struct {
	Expr string
	// Result is "true", "false", "pending: ..." or an evaluation error.
	Result   string
	OK       bool
	Operands []Operand
}

// Operand is one field a condition reads; Value is rendered for one line,
// "" with Missing when the evaluation never reached or found it.
type Operand struct {
	Path    string
	Value   string
	Missing bool
}

// InstanceLogLimit bounds an instance's own log.
const InstanceLogLimit = 200

// AppendBounded returns log with lines appended, the oldest dropped past
// InstanceLogLimit. The elements log shows are never modified (snapshots
// share them): lines go into spare capacity beyond its length, which no
// reader sees, so a reconcile does not copy the whole log. This relies on
// the store's writers being serialised and always extending the newest
// value, which Store.UpdateInstance guarantees.
func AppendBounded(log []LogLine, lines ...LogLine) []LogLine {
	if len(log)+len(lines) <= InstanceLogLimit {
		// append grows the array as lines come (most instances log a
		// few): a full-size array per instance would cost 14 KB each.
		return append(log, lines...)
	}
	all := append(log[len(log):len(log):len(log)], log...) // a copy, never log's array
	all = append(all, lines...)
	out := make([]LogLine, 0, 2*InstanceLogLimit)
	return append(out, all[len(all)-InstanceLogLimit:]...)
}
