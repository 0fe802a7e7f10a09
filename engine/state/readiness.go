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
// InstanceLogLimit. log is never modified (snapshots share it).
func AppendBounded(log []LogLine, lines ...LogLine) []LogLine {
	out := make([]LogLine, 0, min(len(log)+len(lines), InstanceLogLimit))
	all := append(append([]LogLine(nil), log...), lines...)
	if len(all) > InstanceLogLimit {
		all = all[len(all)-InstanceLogLimit:]
	}
	return append(out, all...)
}
