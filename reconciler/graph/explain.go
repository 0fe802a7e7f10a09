package graph

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types/ref"
	"github.com/kroscope/kroscope/reconciler/graph/cellib"
)

// Operand is one field an expression reads, with the value it had when the
// expression was evaluated.
type Operand struct {
	// Path is the field selection as written, e.g. "worker.spec.replicas".
	Path string
	// Value is the JSON-like value; Missing is true when the evaluation
	// never produced it (the field is absent, or the operand was not
	// reached because && or || had already decided).
	Value   any
	Missing bool
}

// Check is one readyWhen condition judged with its operands.
type Check struct {
	Source string
	// Result is "true", "false", "pending: <what is missing>" or the
	// evaluation error.
	Result   string
	OK       bool
	Operands []Operand
}

// explainPlan is a second program of the expression that records every
// sub-expression's value (cel.OptTrackState). It is planned only when an
// explanation is asked for: tracking costs on every evaluation.
func (e *Expression) explainPlan() (cel.Program, *cel.Ast, error) {
	if e.env == nil {
		return nil, nil, fmt.Errorf("expression ${%s} was not compiled by a graph Builder", e.Source)
	}
	a := e.ast
	if a == nil {
		var iss *cel.Issues
		if a, iss = e.env.Compile(e.Source); iss != nil && iss.Err() != nil {
			return nil, nil, fmt.Errorf("${%s}: %w", e.Source, iss.Err())
		}
	}
	// The same limits as Eval: an explanation is asked for exactly when an
	// expression did not pass, and one that was stopped must stop here too.
	// (cel-go v0.31 skips cost tracking when state is tracked as well; the
	// size bound and the deadline, checked by guardCalls, still hold.)
	prg, err := e.env.Program(a, append(e.limits.programOptions(), cel.EvalOptions(cel.OptTrackState))...)
	return prg, a, err
}

// Explain evaluates the expression and returns its result together with
// the values of the field selections it reads, outermost first in source
// order ("worker.status.availableReplicas", not also "worker.status").
func (e *Expression) Explain(vars Vars) (any, []Operand, error) {
	prg, a, err := e.explainPlan()
	if err != nil {
		return nil, nil, err
	}
	for _, id := range e.References {
		if _, ok := vars[id]; !ok {
			return nil, e.operands(a, nil), &pendingError{msg: fmt.Sprintf("%s is not observed yet", id)}
		}
	}
	act := make(map[string]any, len(e.References)+1)
	for _, id := range e.References {
		act[id] = vars[id]
	}
	out, det, evalErr := e.limits.run(prg, act)
	var st interface{ Value(int64) (ref.Val, bool) }
	if det != nil {
		st = det.State()
	}
	ops := e.operands(a, st)
	if _, ok := evalErr.(*LimitError); ok {
		return nil, ops, evalErr
	}
	if evalErr != nil {
		return nil, ops, e.redact(classify(evalErr))
	}
	v, err := cellib.Native(out, cellib.ForObject)
	return v, ops, err
}

// operands walks the checked AST for field selections rooted at one of the
// expression's variables and reads their values from the tracked state.
func (e *Expression) operands(a *cel.Ast, st interface{ Value(int64) (ref.Val, bool) }) []Operand {
	root := a.NativeRep().Expr()
	inner := map[int64]bool{} // selections that are the operand of a longer one
	var sels []celast.Expr
	celast.PreOrderVisit(root, celast.NewExprVisitor(func(x celast.Expr) {
		if x.Kind() != celast.SelectKind || x.AsSelect().IsTestOnly() {
			return
		}
		inner[x.AsSelect().Operand().ID()] = true
		sels = append(sels, x)
	}))
	var out []Operand
	seen := map[string]bool{}
	for _, x := range sels {
		if inner[x.ID()] {
			continue
		}
		p, rootVar := selectPath(x)
		if p == "" || !slices.Contains(e.References, rootVar) || seen[p] {
			continue
		}
		seen[p] = true
		op := Operand{Path: p, Missing: true}
		if st != nil {
			if v, ok := st.Value(x.ID()); ok && v != nil {
				if nv, err := cellib.Native(v, cellib.ForObject); err == nil {
					op.Value, op.Missing = nv, false
				}
			}
		}
		out = append(out, op)
	}
	return out
}

// selectPath renders a chain of field selections down to an identifier
// ("a.b.c") and returns that identifier; "" for anything else (a call's
// result, an index), whose value is not a field someone can look up.
func selectPath(x celast.Expr) (string, string) {
	var parts []string
	for x.Kind() == celast.SelectKind {
		parts = append(parts, x.AsSelect().FieldName())
		x = x.AsSelect().Operand()
	}
	if x.Kind() != celast.IdentKind {
		return "", ""
	}
	parts = append(parts, x.AsIdent())
	slices.Reverse(parts)
	return strings.Join(parts, "."), x.AsIdent()
}

// ExplainReady judges every readyWhen condition against the observed
// object, with the values each reads: unlike IsReady it does not stop at
// the first false, so the screen can show which of several fails. Nil for
// a resource without readyWhen, and for collections (judged item by item).
func (r *Resource) ExplainReady(observed map[string]any) []Check {
	if len(r.ReadyWhen) == 0 || r.IsList() || observed == nil {
		return nil
	}
	vars := Vars{r.ID: observed}
	out := make([]Check, 0, len(r.ReadyWhen))
	for _, e := range r.ReadyWhen {
		v, ops, err := e.Explain(vars)
		c := Check{Source: e.Source, Operands: ops}
		switch b, isBool := v.(bool); {
		case err != nil && IsDataPending(err):
			c.Result = "pending: " + pendingDetail(err)
		case err != nil:
			c.Result = err.Error()
		case isBool:
			c.OK, c.Result = b, fmt.Sprint(b)
		default:
			c.Result = fmt.Sprintf("returned %s %v, not a boolean", typeName(v), v)
		}
		out = append(out, c)
	}
	return out
}

// FormatValue renders an operand's value compactly for one line: JSON for
// lists and objects, cut to n bytes.
func FormatValue(v any, n int) string {
	var s string
	switch v.(type) {
	case map[string]any, []any:
		b, err := json.Marshal(v)
		if err != nil {
			s = fmt.Sprint(v)
		} else {
			s = string(b)
		}
	case string:
		s = fmt.Sprintf("%q", v)
	case nil:
		s = "null"
	default:
		s = fmt.Sprint(v)
	}
	if n > 3 && len(s) > n {
		s = s[:n-3] + "..."
	}
	return s
}
