package graph

import (
	"errors"
	"fmt"
	"maps"
	"sort"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/kroscope/kroscope/reconciler/graph/cellib"
)

// StatusConditionsKey is the status key whose list holds author-declared
// conditions (kro v0.9.3): each entry a ${...} returning
// runtime.newCondition(...) or a list of them.
const StatusConditionsKey = "conditions"

// BuiltinConditionTypes are the instance conditions the controller writes
// itself; runtime.condition(schema, type) may read only these.
var BuiltinConditionTypes = []string{"InstanceManaged", "GraphResolved", "ResourcesReady", "Ready"}

// HasConditions reports whether the graph declares status.conditions: they
// then replace the built-in conditions on the instance.
func (g *Graph) HasConditions() bool { return len(g.Conditions) > 0 }

// conditionEnv adds the runtime variable and the Condition type to env.
func conditionEnv(env *cel.Env) (*cel.Env, error) {
	e, err := env.Extend(cellib.Runtime())
	if err != nil {
		return nil, err
	}
	return e.Extend(cellib.ConditionTypes(e))
}

// conditions compiles spec.schema.status.conditions into g.Conditions.
func (bd *build) conditions(env *cel.Env, g *Graph, raw any) {
	const base = "spec.schema.status.conditions"
	list, ok := raw.([]any)
	if !ok {
		bd.errorf("", base, "write a list of ${runtime.newCondition({type: ..., status: ...})}",
			"status.conditions must be a list, got %s", typeName(raw))
		return
	}
	checkEnv, err := conditionEnv(env)
	if err != nil {
		bd.errorf("", base, "", "CEL environment: %v", err)
		return
	}
	runEnv := checkEnv
	if bd.runEnv != nil {
		if runEnv, err = conditionEnv(bd.runEnv); err != nil {
			bd.errorf("", base, "", "CEL environment: %v", err)
			return
		}
	}
	var asts []*cel.Ast
	var paths []string
	for i, el := range list {
		path := fmt.Sprintf("%s[%d]", base, i)
		e := bd.conditionEntry(checkEnv, path, el)
		if e == nil {
			continue
		}
		e.limits = bd.b.limits
		asts = append(asts, e.ast)
		paths = append(paths, path)
		if runEnv != checkEnv {
			e.env, e.ast = runEnv, nil
		}
		g.Conditions = append(g.Conditions, e)
	}
	bd.conditionLiterals(asts, paths)
}

// conditionEntry compiles one status.conditions entry: one standalone
// expression returning conditions; nil after reporting an error.
func (bd *build) conditionEntry(env *cel.Env, path string, el any) *Expression {
	s, ok := el.(string)
	if !ok {
		bd.errorf("", path, "write ${runtime.newCondition({...})}", "must be a CEL expression string, got %s", typeName(el))
		return nil
	}
	parts, err := Scan(s)
	if err != nil {
		bd.errorf("", path, "", "%v", err)
		return nil
	}
	if !isStandalone(parts) {
		bd.errorf("", path, "write exactly one ${...} with nothing around it (a YAML | block adds a newline; use |-)",
			"%q is not a standalone expression", s)
		return nil
	}
	c, err := compile(env, parts[0].Text)
	if err = bd.explainLeftOut(err); err != nil {
		bd.errorf("", path, "", "${%s}: %v", parts[0].Text, err)
		return nil
	}
	if !bd.checkOmit("", path, c.expr, false) {
		return nil
	}
	if !isConditionResult(c.out) {
		bd.errorf("", path, "return runtime.newCondition({type: ..., status: ...}) or a list of them",
			"${%s} returns %s, not a condition", c.expr.Source, c.out.String())
		return nil
	}
	return c.expr
}

// isConditionResult reports whether t is a Condition, a list of them, or
// dyn (checked when evaluated).
func isConditionResult(t *cel.Type) bool {
	if t == nil {
		return true
	}
	if t.Kind() == types.ListKind && len(t.Parameters()) == 1 {
		t = t.Parameters()[0]
	}
	return t.Kind() == types.DynKind || t.Kind() == types.AnyKind || t.TypeName() == cellib.ConditionTypeName
}

// conditionLiterals checks what can be seen in the source: a literal type
// declared by two entries, a literal status that is not True, False or
// Unknown, an empty literal type, and runtime.condition(schema, T) for a T
// that is not built-in (author conditions cannot read each other).
func (bd *build) conditionLiterals(asts []*cel.Ast, paths []string) {
	declared := map[string]string{}
	for i, a := range asts {
		for _, call := range runtimeCalls(a, "newCondition") {
			args := call.AsCall().Args()
			if len(args) != 1 {
				continue
			}
			if typ, ok := literalEntry(args[0], "type"); ok {
				if prev, dup := declared[typ]; dup && prev != paths[i] {
					bd.errorf("", paths[i], "give every condition its own type",
						"condition type %q is declared by more than one conditions entry (also %s)", typ, prev)
				}
				declared[typ] = paths[i]
				if typ == "" {
					bd.errorf("", paths[i], "", "runtime.newCondition: type must not be empty")
				}
			}
			if st, ok := literalEntry(args[0], "status"); ok && !cellib.IsConditionStatus(st) {
				bd.errorf("", paths[i], "use True, False or Unknown", "runtime.newCondition: status must be one of True, False, Unknown (got %q)", st)
			}
		}
	}
	for i, a := range asts {
		for _, call := range runtimeCalls(a, "condition") {
			args := call.AsCall().Args()
			if len(args) != 2 || args[0].Kind() != ast.IdentKind || args[0].AsIdent() != SchemaIdentifier {
				continue
			}
			typ, ok := literalString(args[1])
			if !ok || isBuiltinCondition(typ) {
				continue
			}
			if _, own := declared[typ]; own {
				bd.errorf("", paths[i], "compute it from the resources instead",
					"runtime.condition(schema, %q): custom conditions cannot reference each other", typ)
			} else {
				bd.errorf("", paths[i], "read one of "+strings.Join(BuiltinConditionTypes, ", "),
					"runtime.condition(schema, %q): unknown condition type; only the built-in ones can be read from schema", typ)
			}
		}
	}
}

func isBuiltinCondition(t string) bool {
	for _, b := range BuiltinConditionTypes {
		if b == t {
			return true
		}
	}
	return false
}

// runtimeCalls returns the calls runtime.<method>(...) in a.
func runtimeCalls(a *cel.Ast, method string) []ast.Expr {
	var out []ast.Expr
	ast.PreOrderVisit(a.NativeRep().Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		if e.Kind() != ast.CallKind {
			return
		}
		c := e.AsCall()
		if c.IsMemberFunction() && c.FunctionName() == method && c.Target().Kind() == ast.IdentKind && c.Target().AsIdent() == cellib.RuntimeVariable {
			out = append(out, e)
		}
	}))
	return out
}

func literalString(e ast.Expr) (string, bool) {
	if e.Kind() != ast.LiteralKind {
		return "", false
	}
	s, ok := e.AsLiteral().(types.String)
	return string(s), ok
}

// literalEntry is the string literal value of key in a map literal.
func literalEntry(m ast.Expr, key string) (string, bool) {
	if m.Kind() != ast.MapKind {
		return "", false
	}
	for _, en := range m.AsMap().Entries() {
		me := en.AsMapEntry()
		if k, ok := literalString(me.Key()); ok && k == key {
			return literalString(me.Value())
		}
	}
	return "", false
}

// ErrConditionsDegraded marks a status.conditions evaluation in which an
// entry failed or two conditions had the same type: kro then drops those
// and reports the instance in ERROR.
var ErrConditionsDegraded = errors.New("status.conditions degraded")

// EvalConditions evaluates status.conditions in order. schema is vars'
// instance with status.conditions set to builtins (the built-in
// conditions, as maps with type, status, reason, message), which
// runtime.condition(schema, ...) reads. An entry whose inputs are pending
// is skipped and incomplete is set (the caller keeps its previous
// conditions); a failing entry and every condition whose type occurs
// twice are dropped, and err (wrapping ErrConditionsDegraded) says why.
func (g *Graph) EvalConditions(vars Vars, builtins []any) (conds []cellib.Condition, incomplete bool, err error) {
	cv := conditionVars(vars, builtins)
	var failures []string
	for i, e := range g.Conditions {
		out, err := e.evalVal(cv)
		if err != nil {
			if IsDataPending(err) {
				incomplete = true
				continue
			}
			failures = append(failures, fmt.Sprintf("conditions[%d]: %v (in %s)", i, err, ExpressionRef(e.Source)))
			continue
		}
		cs, err := cellib.Conditions(out)
		if err != nil {
			failures = append(failures, fmt.Sprintf("conditions[%d]: %v (in %s)", i, err, ExpressionRef(e.Source)))
			continue
		}
		conds = append(conds, cs...)
	}
	kept, dups := dropDuplicateTypes(conds)
	if len(dups) > 0 {
		failures = append(failures, fmt.Sprintf("duplicate condition type(s) %v dropped", dups))
	}
	if len(failures) > 0 {
		return kept, true, fmt.Errorf("%w: %s", ErrConditionsDegraded, strings.Join(failures, "; "))
	}
	return kept, incomplete, nil
}

// conditionVars is vars with the instance's status.conditions set to
// builtins, and the runtime variable.
func conditionVars(vars Vars, builtins []any) Vars {
	cv := maps.Clone(vars)
	if cv == nil {
		cv = Vars{}
	}
	inst, _ := vars[SchemaIdentifier].(map[string]any)
	inst = maps.Clone(inst)
	if inst == nil {
		inst = map[string]any{}
	}
	inst["status"] = map[string]any{StatusConditionsKey: builtins}
	cv[SchemaIdentifier] = inst
	cv[cellib.RuntimeVariable] = cellib.RuntimeValue
	return cv
}

// dropDuplicateTypes keeps the conditions whose type occurs once; dups are
// the other types, sorted, each once.
func dropDuplicateTypes(conds []cellib.Condition) (kept []cellib.Condition, dups []string) {
	count := map[string]int{}
	for _, c := range conds {
		count[c.ConditionType]++
	}
	for _, c := range conds {
		switch n := count[c.ConditionType]; {
		case n == 1:
			kept = append(kept, c)
		case n > 1:
			dups = append(dups, c.ConditionType)
			count[c.ConditionType] = 0 // reported once
		}
	}
	sort.Strings(dups)
	return kept, dups
}
