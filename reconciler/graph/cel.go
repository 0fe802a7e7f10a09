package graph

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
	"github.com/kroscope/kroscope/reconciler/graph/cellib"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/library"
)

// baseEnv is the CEL environment every graph extends: kro's base
// declarations (cel-go's extensions, the Kubernetes libraries and kro's own
// functions, see package cellib) plus kroscope's extras math.* and sets.*.
var baseEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(baseDeclarations()...)
})

// baseDeclarations lists the libraries in kro's order, then kroscope's.
func baseDeclarations() []cel.EnvOption {
	return []cel.EnvOption{
		ext.TwoVarComprehensions(),
		ext.Lists(),
		ext.Strings(),
		ext.Bindings(),
		cel.OptionalTypes(),
		ext.Encoders(),
		library.Lists(),
		library.URLs(),
		library.Regex(),
		library.Quantity(),
		library.IP(),
		library.CIDR(),
		library.SemverLib(),
		cellib.Random(),
		cellib.Maps(),
		cellib.JSON(),
		cellib.Hash(),
		cellib.Lists(),
		// Declared everywhere, as kro does, so a misplaced omit() gets the
		// builder's explanation rather than "unknown function".
		cellib.Omit(),
		// kroscope's extensions; `kroscope validate` warns that kro lacks them.
		ext.Math(),
		ext.Sets(),
	}
}

// IsKroscopeOnlyFunction reports whether the CEL function name is one of
// kroscope's extensions that kro does not declare (math.*, sets.*): a graph
// that calls one works here but is rejected by kro.
func IsKroscopeOnlyFunction(name string) bool {
	return strings.HasPrefix(name, "math.") || strings.HasPrefix(name, "sets.")
}

// SeededString is random.seededString's result, see cellib.SeededString.
func SeededString(n int, seed string) string { return cellib.SeededString(n, seed) }

// graphEnv extends the base environment with schema (typed from
// schemaType, or dyn when nil) and every resource id (typed from types, or
// dyn). A collection's id is a list of its items (list(dyn)).
func graphEnv(schemaType *apiservercel.DeclType, ids []string, resourceTypes map[string]*apiservercel.DeclType, collections map[string]bool) (*cel.Env, error) {
	base, err := baseEnv()
	if err != nil {
		return nil, fmt.Errorf("CEL environment: %w", err)
	}
	var roots []*apiservercel.DeclType
	opts := []cel.EnvOption{}
	if schemaType != nil {
		roots = append(roots, schemaType)
		opts = append(opts, cel.Variable(SchemaIdentifier, schemaType.CelType()))
	} else {
		opts = append(opts, cel.Variable(SchemaIdentifier, cel.DynType))
	}
	for _, id := range ids {
		if collections[id] {
			opts = append(opts, cel.Variable(id, cel.ListType(cel.DynType)))
		} else if t := resourceTypes[id]; t != nil {
			roots = append(roots, t)
			opts = append(opts, cel.Variable(id, t.CelType()))
		} else {
			opts = append(opts, cel.Variable(id, cel.DynType))
		}
	}
	if len(roots) > 0 {
		provider := apiservercel.NewDeclTypeProvider(roots...)
		provider.SetRecognizeKeywordAsFieldName(true)
		typed, err := provider.WithTypeProvider(base.CELTypeProvider())
		if err != nil {
			return nil, fmt.Errorf("CEL types: %w", err)
		}
		opts = append([]cel.EnvOption{cel.CustomTypeProvider(lenientFields{typed}), cel.CustomTypeAdapter(typed)}, opts...)
	}
	return base.Extend(opts...)
}

// compiled is an expression with its checked output type.
type compiled struct {
	expr *Expression
	out  *cel.Type
}

// compile parses, checks and plans src. The error text is CEL's, one
// issue per "column N: message", with unknown names explained.
func compile(env *cel.Env, src string) (*compiled, error) {
	a, iss := env.Compile(src)
	if iss != nil && iss.Err() != nil {
		return nil, celIssues(env, src, iss)
	}
	// Planning compiles a constant regular expression, so kro, which plans
	// every expression when it builds, refuses a bad pattern there. Plan
	// those now; the rest wait for their first evaluation.
	if callsRegex(a) {
		if _, err := env.Program(a); err != nil {
			return nil, err
		}
	}
	return &compiled{
		expr: &Expression{Source: src, References: references(a), usesOmit: callsOmit(a), env: env, ast: a},
		out:  a.OutputType(),
	}, nil
}

var undeclared = regexp.MustCompile(`^undeclared reference to '([^']*)' \(in container ''\)$`)

// celIssues turns CEL issues into one error. CEL says "undeclared
// reference" both for variables and functions; the parsed expression
// tells which one it was.
func celIssues(env *cel.Env, src string, iss *cel.Issues) error {
	var idents map[string]bool
	var msgs []string
	for _, e := range iss.Errors() {
		msg := e.Message
		if m := undeclared.FindStringSubmatch(msg); m != nil {
			if idents == nil {
				idents = parsedIdents(env, src)
			}
			if idents[m[1]] && m[1] == cellib.RuntimeVariable {
				msg = "runtime can only be used in spec.schema.status.conditions"
			} else if idents[m[1]] {
				msg = unknownIdentifier(m[1])
			} else {
				msg = fmt.Sprintf("unknown function %q", m[1])
			}
		}
		msgs = append(msgs, fmt.Sprintf("column %d: %s", e.Location.Column()+1, msg))
	}
	return fmt.Errorf("%s", strings.Join(msgs, "; "))
}

func unknownIdentifier(name string) string {
	return fmt.Sprintf("unknown identifier %q: only schema and resource ids can be read", name)
}

// leftOutResource replaces unknownIdentifier for a resource the build left
// out for errors of its own: its id is not unknown, and the error to fix is
// the resource's.
func leftOutResource(id string) string {
	return fmt.Sprintf("resource %q is left out for its own errors (fix those first)", id)
}

// parsedIdents returns the identifiers used as variables in src.
func parsedIdents(env *cel.Env, src string) map[string]bool {
	out := map[string]bool{}
	a, iss := env.Parse(src)
	if iss != nil && iss.Err() != nil {
		return out
	}
	ast.PreOrderVisit(a.NativeRep().Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		if e.Kind() == ast.IdentKind {
			out[e.AsIdent()] = true
		}
	}))
	return out
}

// references returns the top-level identifiers a checked expression reads,
// sorted and unique, leaving out comprehension and cel.bind variables.
func references(a *cel.Ast) []string {
	w := refWalker{a: a, seen: map[string]bool{}}
	w.walk(a.NativeRep().Expr(), map[string]bool{})
	out := make([]string, 0, len(w.seen))
	for id := range w.seen {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// refWalker collects the free identifiers of a checked expression.
type refWalker struct {
	a    *cel.Ast
	seen map[string]bool
}

// walk visits e; bound are the variables of the comprehensions around it.
func (w *refWalker) walk(e ast.Expr, bound map[string]bool) {
	switch e.Kind() {
	case ast.IdentKind:
		// A type name (int, string, list...) is an identifier too; it is
		// a constant, never data to wait for.
		name := e.AsIdent()
		if !bound[name] && !strings.HasPrefix(name, "@") && w.a.NativeRep().GetType(e.ID()).Kind() != types.TypeKind {
			w.seen[name] = true
		}
	case ast.SelectKind:
		w.walk(e.AsSelect().Operand(), bound)
	case ast.CallKind:
		c := e.AsCall()
		if c.IsMemberFunction() {
			w.walk(c.Target(), bound)
		}
		for _, arg := range c.Args() {
			w.walk(arg, bound)
		}
	case ast.ListKind:
		for _, el := range e.AsList().Elements() {
			w.walk(el, bound)
		}
	case ast.MapKind:
		for _, en := range e.AsMap().Entries() {
			me := en.AsMapEntry()
			w.walk(me.Key(), bound)
			w.walk(me.Value(), bound)
		}
	case ast.StructKind:
		for _, f := range e.AsStruct().Fields() {
			w.walk(f.AsStructField().Value(), bound)
		}
	case ast.ComprehensionKind:
		w.comprehension(e.AsComprehension(), bound)
	}
}

// comprehension visits a comprehension: its range and initial value in
// the outer scope, the rest with its variables bound.
func (w *refWalker) comprehension(c ast.ComprehensionExpr, bound map[string]bool) {
	w.walk(c.IterRange(), bound)
	w.walk(c.AccuInit(), bound)
	inner := map[string]bool{c.IterVar(): true, c.AccuVar(): true}
	if c.HasIterVar2() {
		inner[c.IterVar2()] = true
	}
	for k := range bound {
		inner[k] = true
	}
	w.walk(c.LoopCondition(), inner)
	w.walk(c.LoopStep(), inner)
	w.walk(c.Result(), inner)
}

// isBoolish reports whether t can be a condition: bool, optional(bool) or
// dyn (checked at run time).
func isBoolish(t *cel.Type) bool {
	if t == nil {
		return true
	}
	switch t.Kind() {
	case types.BoolKind, types.DynKind, types.AnyKind:
		return true
	case types.OpaqueKind:
		if t.TypeName() == "optional_type" && len(t.Parameters()) == 1 {
			return isBoolish(t.Parameters()[0])
		}
	}
	return false
}

// selfEnv is the environment of spec.schema.validation rules: self is the
// instance spec (dyn when its type is unknown).
func selfEnv(self *apiservercel.DeclType) (*cel.Env, error) {
	base, err := baseEnv()
	if err != nil {
		return nil, err
	}
	if self == nil {
		return base.Extend(cel.Variable("self", cel.DynType))
	}
	provider := apiservercel.NewDeclTypeProvider(self)
	provider.SetRecognizeKeywordAsFieldName(true)
	opts, err := provider.EnvOptions(base.CELTypeProvider())
	if err != nil {
		return nil, err
	}
	return base.Extend(append(opts, cel.Variable("self", self.CelType()))...)
}

// plan returns the expression's program, planning it once.
func (e *Expression) plan() (cel.Program, error) {
	e.planOnce.Do(func() {
		if e.env == nil {
			e.planErr = fmt.Errorf("expression ${%s} was not compiled by a graph Builder", e.Source)
			return
		}
		a := e.ast
		if a == nil {
			var iss *cel.Issues
			if a, iss = e.env.Compile(e.Source); iss != nil && iss.Err() != nil {
				e.planErr = fmt.Errorf("${%s}: %w", e.Source, iss.Err())
				return
			}
		}
		e.program, e.planErr = e.env.Program(a, e.limits.programOptions()...)
	})
	return e.program, e.planErr
}

// regexFunctions take a pattern the planner may compile.
var regexFunctions = map[string]bool{"matches": true, "find": true, "findAll": true}

// callsRegex reports whether a calls one of regexFunctions.
func callsRegex(a *cel.Ast) bool {
	found := false
	ast.PreOrderVisit(a.NativeRep().Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		found = found || e.Kind() == ast.CallKind && regexFunctions[e.AsCall().FunctionName()]
	}))
	return found
}
