package graph

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/overloads"
	"github.com/kroscope/kroscope/reconciler/graph/cellib"
	"k8s.io/apiserver/pkg/cel/library"
)

// UnknownInputSize is the size (elements of a list or map, characters of a
// string) the static cost estimate assumes for an input it cannot know: a
// field of the instance or of an observed resource. The run-time limits
// still stop an input that is larger.
const UnknownInputSize = 1000

// unboundedCost is where cel-go says "no bound can be given": it counts a
// size it cannot bound (a list built from an integer input, as
// lists.range(n), or the result of a function it knows nothing of) as
// MaxUint64 and scales it by at least the string traversal factor 0.1, so
// any estimate above MaxUint64/20 comes from such a size, not from a bound.
// Such an expression is left to the run-time limits rather than rejected.
const unboundedCost = math.MaxUint64 / 20

// EstimateCosts estimates statically, where cel-go can, the worst-case cost
// of every expression of g, naming the resource, the field and the
// expression of each that exceeds limits.Cost:
//   - rejected: its worst case exceeds the limit even when every input of
//     unknown size (a field of the instance or of an observed resource) has
//     one element or character, so the constants in it make it too costly
//     for any instance;
//   - large: it exceeds the limit only when such inputs have
//     UnknownInputSize elements or characters. kro's own examples hold such
//     expressions (a map over a list of lists): they run, and an instance
//     whose inputs are that large FAILs the resource at run time.
func EstimateCosts(g *Graph, limits Limits) (rejected, large Errors) {
	c := &costCheck{g: g, limits: limits.orDefault(),
		inputs: map[string]bool{SchemaIdentifier: true, EachIdentifier: true, cellib.RuntimeVariable: true}}
	for id, r := range g.Resources {
		c.inputs[id] = true
		for _, d := range r.ForEach {
			c.inputs[d.Name] = true
		}
	}
	eachExpression(g, c.check)
	return c.rejected, c.large
}

// costCheck is EstimateCosts' state: the graph's input names and what it
// found so far.
type costCheck struct {
	g               *Graph
	limits          Limits
	inputs          map[string]bool
	rejected, large Errors
}

// check estimates one expression with inputs of UnknownInputSize and, when
// that exceeds the limit, of one element, and records what it found.
func (c *costCheck) check(resource, path string, e *Expression) {
	if e == nil || e.env == nil {
		return
	}
	a, iss := e.env.Compile(e.Source)
	if iss != nil && iss.Err() != nil {
		return // reported by Build
	}
	worst, ok := c.estimate(e, a, UnknownInputSize)
	if !ok || worst <= c.limits.Cost {
		return
	}
	if least, ok := c.estimate(e, a, 1); ok && least > c.limits.Cost {
		c.rejected = append(c.rejected, &Error{RGD: c.g.Name, Resource: resource, Path: path,
			Message: fmt.Sprintf("${%s}: estimated worst-case CEL cost %d exceeds the limit of %d even with inputs of one element", e.Source, least, c.limits.Cost),
			Fix:     fmt.Sprintf("make the expression cheaper, or raise the limit with --%s", CostLimitFlag)})
		return
	}
	c.large = append(c.large, &Error{RGD: c.g.Name, Resource: resource, Path: path,
		Message: fmt.Sprintf("${%s}: estimated worst-case CEL cost %d exceeds the limit of %d when its inputs have %d elements or characters: an instance with inputs that large FAILs this resource at run time", e.Source, worst, c.limits.Cost, UnknownInputSize),
		Fix:     fmt.Sprintf("bound the inputs in the schema (maxItems, maxLength), or raise the limit with --%s", CostLimitFlag)})
}

// estimate is cel-go's worst case with every input of unknown size having
// size elements or characters; false when cel-go can give no bound.
func (c *costCheck) estimate(e *Expression, a *cel.Ast, size uint64) (uint64, bool) {
	sizes := unknownSizes{names: iterationVariables(a, c.inputs), size: size}
	est, err := e.env.EstimateCost(a, costEstimator{&library.CostEstimator{SizeEstimator: sizes}})
	if err != nil || est.Max >= unboundedCost {
		return 0, false
	}
	return est.Max, true
}

// eachExpression calls fn with every expression of g, resources by id,
// then status fields and conditions, with the path that names it.
func eachExpression(g *Graph, fn func(resource, path string, e *Expression)) {
	for _, id := range slices.Sorted(maps.Keys(g.Resources)) {
		r := g.Resources[id]
		for _, f := range r.Fields {
			for _, e := range f.Expressions {
				fn(id, f.Path, e)
			}
		}
		for i, e := range r.IncludeWhen {
			fn(id, fmt.Sprintf("includeWhen[%d]", i), e)
		}
		for i, e := range r.ReadyWhen {
			fn(id, fmt.Sprintf("readyWhen[%d]", i), e)
		}
		for i, d := range r.ForEach {
			fn(id, fmt.Sprintf("forEach[%d].%s", i, d.Name), d.Expression)
		}
	}
	for _, f := range g.Status {
		for _, e := range f.Expressions {
			fn("", "status."+f.Path, e)
		}
	}
	for i, e := range g.Conditions {
		fn("", fmt.Sprintf("spec.schema.status.conditions[%d]", i), e)
	}
}

// unknownSizes sizes what cel-go cannot: a field selected from something,
// or a name in names (the graph's variables and the variables iterating
// over something, whose elements' sizes cel-go does not know either), has
// size elements or characters. cel.bind variables are left out of names:
// cel-go computes their sizes, and would take this estimate over its own.
type unknownSizes struct {
	names map[string]bool
	size  uint64
}

func (u unknownSizes) EstimateSize(n checker.AstNode) *checker.SizeEstimate {
	e := n.Expr()
	if e == nil {
		return nil
	}
	switch e.Kind() {
	case ast.SelectKind:
	case ast.IdentKind:
		if !u.names[e.AsIdent()] {
			return nil
		}
	default:
		return nil
	}
	return &checker.SizeEstimate{Min: 0, Max: u.size}
}

// iterationVariables is inputs and the iteration variables of a's
// comprehensions (map, filter, all, exists...), less any name cel.bind
// gives (a comprehension's accumulator).
func iterationVariables(a *cel.Ast, inputs map[string]bool) map[string]bool {
	names := maps.Clone(inputs)
	bound := map[string]bool{}
	ast.PostOrderVisit(a.NativeRep().Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		if e.Kind() != ast.ComprehensionKind {
			return
		}
		c := e.AsComprehension()
		names[c.IterVar()] = true
		if c.HasIterVar2() {
			names[c.IterVar2()] = true
		}
		bound[c.AccuVar()] = true
	}))
	for n := range bound {
		delete(names, n)
	}
	return names
}

func (unknownSizes) EstimateCallCost(string, string, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
	return nil
}

// stringResultSizes is the longest string each conversion to string can
// return. cel-go gives these results no size, which makes any
// concatenation with one (name + '-' + string(i)) look unbounded.
var stringResultSizes = map[string]uint64{
	overloads.IntToString:       20, // -9223372036854775808
	overloads.UintToString:      20, // 18446744073709551615
	overloads.DoubleToString:    24, // -1.7976931348623157e+308
	overloads.BoolToString:      5,
	overloads.TimestampToString: 35, // 2006-01-02T15:04:05.999999999-07:00
	overloads.DurationToString:  32, // -315576000000.999999999s
}

// costEstimator is the Kubernetes CEL library's estimator, with sizes for
// the results of the conversions to string.
type costEstimator struct{ *library.CostEstimator }

func (c costEstimator) EstimateCallCost(function, overloadID string, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	if n, ok := stringResultSizes[overloadID]; ok {
		return &checker.CallEstimate{CostEstimate: checker.FixedCostEstimate(1), ResultSize: &checker.SizeEstimate{Min: 1, Max: n}}
	}
	return c.CostEstimator.EstimateCallCost(function, overloadID, target, args)
}
