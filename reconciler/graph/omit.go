package graph

import (
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/ast"
	"github.com/kroscope/kroscope/reconciler/graph/cellib"
)

// OmitFlag is the command-line flag that enables omit(); OmitFeatureGate
// is kro's name for the same switch (off by default in both).
const (
	OmitFlag        = "enable-cel-omit"
	OmitFeatureGate = "CELOmitFunction"
)

// WithCELOmit allows omit() in resource templates, as kro's
// CELOmitFunction feature gate does. Off, any use of omit() is a build
// error naming the flag.
func WithCELOmit(enabled bool) Option { return func(b *Builder) { b.celOmit = enabled } }

// callsOmit reports whether a checked expression calls omit() anywhere.
func callsOmit(a *cel.Ast) bool {
	found := false
	ast.PreOrderVisit(a.NativeRep().Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		if e.Kind() == ast.CallKind {
			c := e.AsCall()
			if c.FunctionName() == cellib.OmitFunction && !c.IsMemberFunction() && len(c.Args()) == 0 {
				found = true
			}
		}
	}))
	return found
}

// checkOmit reports omit() in e where it is not allowed: anywhere but a
// resource template, in a template while the gate is off, and on the
// fields that identify the object (see omitIdentity). It reports whether
// e may stay.
func (bd *build) checkOmit(resource, path string, e *Expression, inTemplate bool) bool {
	if e == nil || !e.usesOmit {
		return true
	}
	switch {
	case !inTemplate:
		bd.errorf(resource, path, "use includeWhen to leave out a whole resource",
			"${%s}: omit() can only be used in resource template expressions", e.Source)
	case !bd.b.celOmit:
		bd.errorf(resource, path, "add --"+OmitFlag+"; kro needs --feature-gates="+OmitFeatureGate+"=true",
			"${%s}: omit() requires the %s feature gate to be enabled", e.Source, OmitFeatureGate)
	default:
		return true
	}
	return false
}

// omitIdentity rejects omit() on metadata.name, and on metadata.namespace
// of a namespaced child of a cluster-scoped instance (it has no namespace
// to fall back to): without them the object cannot be found again.
func (bd *build) omitIdentity(g *Graph, order []*Resource) {
	for _, r := range order {
		for _, f := range r.Fields {
			if f.Path != "metadata.name" && (f.Path != "metadata.namespace" || g.Instance.Namespaced || !r.Namespaced) {
				continue
			}
			for _, e := range f.Expressions {
				if e.usesOmit {
					bd.errorf(r.ID, formatPath(templateBase(r), f.Segments...), "give the field a value in every case",
						"${%s}: omit() cannot be used on %s: the object needs it to be found", e.Source, f.Path)
				}
			}
		}
	}
}

// dropOmitted removes, in place, every map entry and list element of v
// that holds omit()'s value, and returns v (lists are rebuilt).
func dropOmitted(v any) any {
	switch val := v.(type) {
	case map[string]any:
		for k, child := range val {
			if cellib.IsOmit(child) {
				delete(val, k)
			} else {
				val[k] = dropOmitted(child)
			}
		}
	case []any:
		out := make([]any, 0, len(val))
		for _, el := range val {
			if !cellib.IsOmit(el) {
				out = append(out, dropOmitted(el))
			}
		}
		return out
	}
	return v
}
