package graph

import (
	"fmt"
	"sort"

	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/ast"
	"github.com/kroscope/kroscope/reconciler/graph/cellib"
	"k8s.io/apiserver/pkg/cel/library"
)

// UnknownInputSize is the size (elements of a list or map, characters of a
// string) the static cost estimate assumes for an input it cannot know: a
// field of the instance or of an observed resource. The run-time limits
// still stop an input that is larger.
const UnknownInputSize = 1000

// unboundedCost is where cel-go's saturating arithmetic says "no bound can
// be given" (a size read from an integer input, e.g. lists.range(n)): such
// an expression is left to the run-time limits rather than rejected.
const unboundedCost = uint64(1) << 62

// EstimateCosts estimates statically, where cel-go can, the worst-case cost
// of every expression of g and returns an error for each whose worst case
// exceeds limits.Cost, naming the resource, the field and the expression.
// Inputs of unknown size are assumed to have UnknownInputSize elements or
// characters.
func EstimateCosts(g *Graph, limits Limits) Errors {
	limits = limits.orDefault()
	inputs := map[string]bool{SchemaIdentifier: true, EachIdentifier: true, cellib.RuntimeVariable: true}
	for id, r := range g.Resources {
		inputs[id] = true
		for _, d := range r.ForEach {
			inputs[d.Name] = true
		}
	}
	var errs Errors
	check := func(resource, path string, e *Expression) {
		if e == nil || e.env == nil {
			return
		}
		a, iss := e.env.Compile(e.Source)
		if iss != nil && iss.Err() != nil {
			return // reported by Build
		}
		est, err := e.env.EstimateCost(a, &library.CostEstimator{SizeEstimator: unknownSizes{inputs}})
		if err != nil {
			return
		}
		if est.Max <= limits.Cost || est.Max >= unboundedCost {
			return
		}
		worst := fmt.Sprint(est.Max)
		errs = append(errs, &Error{RGD: g.Name, Resource: resource, Path: path,
			Message: fmt.Sprintf("${%s}: estimated worst-case CEL cost %s exceeds the limit of %d (inputs of unknown size counted as %d elements)", e.Source, worst, limits.Cost, UnknownInputSize),
			Fix:     fmt.Sprintf("make the expression cheaper, or raise the limit with --%s", CostLimitFlag)})
	}
	ids := make([]string, 0, len(g.Resources))
	for id := range g.Resources {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		r := g.Resources[id]
		for _, f := range r.Fields {
			for _, e := range f.Expressions {
				check(id, f.Path, e)
			}
		}
		for i, e := range r.IncludeWhen {
			check(id, fmt.Sprintf("includeWhen[%d]", i), e)
		}
		for i, e := range r.ReadyWhen {
			check(id, fmt.Sprintf("readyWhen[%d]", i), e)
		}
		for i, d := range r.ForEach {
			check(id, fmt.Sprintf("forEach[%d].%s", i, d.Name), d.Expression)
		}
	}
	for _, f := range g.Status {
		for _, e := range f.Expressions {
			check("", "status."+f.Path, e)
		}
	}
	for i, e := range g.Conditions {
		check("", fmt.Sprintf("spec.schema.status.conditions[%d]", i), e)
	}
	return errs
}

// unknownSizes bounds the inputs' sizes: a graph variable or any field
// selected from something. Other identifiers (comprehension and cel.bind
// variables) get the size cel-go computed for them.
type unknownSizes struct{ inputs map[string]bool }

func (u unknownSizes) EstimateSize(n checker.AstNode) *checker.SizeEstimate {
	e := n.Expr()
	if e == nil {
		return nil
	}
	switch e.Kind() {
	case ast.SelectKind:
	case ast.IdentKind:
		if !u.inputs[e.AsIdent()] {
			return nil
		}
	default:
		return nil
	}
	return &checker.SizeEstimate{Min: 0, Max: UnknownInputSize}
}

func (unknownSizes) EstimateCallCost(string, string, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
	return nil
}
