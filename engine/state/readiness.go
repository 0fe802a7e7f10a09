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
