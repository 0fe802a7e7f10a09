package graph

import (
	"fmt"
	"sort"
	"strings"

	"github.com/google/cel-go/common/ast"

	"github.com/kroscope/kroscope/reconciler/graph/simpleschema"
)

// KroWarning is one thing in a definition that kroscope serves and kro
// would reject: one of kroscope's extensions. kroscope validate prints
// them without failing, so authors know which graphs only kroscope runs.
type KroWarning struct {
	RGD, Source string
	// Resource is the resource id, "" for schema-level fields.
	Resource string
	Path     string
	Message  string
}

func (w KroWarning) String() string {
	s := w.Source + ": " + w.RGD
	if w.Resource != "" {
		s += ": resource " + w.Resource
	}
	return s + ": " + w.Path + ": " + w.Message
}

// kroscopeOnlyFunctions are the namespaces of CEL functions kroscope's
// environment has and kro's does not (cel-go's math and sets extensions).
var kroscopeOnlyFunctions = []string{"math.", "sets."}

// macroNames maps the functions macros expand to back to what was written.
var macroNames = map[string]string{"math.@max": "math.greatest", "math.@min": "math.least"}

// KroWarnings lists what kro would reject in rgd, built as g: the kind
// ResourceGroup (renamed in v0.2), spec.schema.validation (removed from
// kro in v0.7.0), the SimpleSchema type number,
// spec.defaultServiceAccounts (removed in v0.5.0) and calls of CEL
// functions kro does not register, found in the compiled expressions.
func KroWarnings(rgd *ResourceGraphDefinition, g *Graph) []KroWarning {
	w := &kroWarnings{rgd: rgd}
	w.definition()
	if g != nil {
		w.expressions(g)
	}
	return w.out
}

// kroWarnings collects KroWarnings' findings for one definition.
type kroWarnings struct {
	rgd *ResourceGraphDefinition
	out []KroWarning
}

func (w *kroWarnings) add(resource, path, format string, args ...any) {
	w.out = append(w.out, KroWarning{RGD: w.rgd.Name, Source: w.rgd.Source, Resource: resource, Path: path, Message: fmt.Sprintf(format, args...)})
}

// definition finds what kro rejects in the definition as written.
func (w *kroWarnings) definition() {
	rgd := w.rgd
	if rgd.OldKind {
		w.add("", "kind", "kro serves no kind %s (its name before v0.2); write kind: %s", LegacyKind, Kind)
	}
	for i := range rgd.Spec.Schema.Validation {
		w.add("", fmt.Sprintf("spec.schema.validation[%d]", i), "kro has no spec.schema.validation (removed in v0.7.0); write the rule as a validation= marker on a field")
	}
	number := func(path string) { w.add("", path, "kro has no SimpleSchema type number; write float") }
	numberTypes("spec.schema.spec", rgd.Spec.Schema.Spec, number)
	numberTypes("spec.schema.types", rgd.Spec.Schema.Types, number)
	if len(rgd.Spec.DefaultServiceAccounts) > 0 {
		w.add("", "spec.defaultServiceAccounts", "kro has no spec.defaultServiceAccounts (removed in v0.5.0); kro reconciles with its own identity")
	}
}

// expressions finds calls of functions kro does not register, resources
// in definition order, then status fields.
func (w *kroWarnings) expressions(g *Graph) {
	ids := make([]string, 0, len(g.Resources))
	for id := range g.Resources {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(a, b int) bool { return g.Resources[ids[a]].Index < g.Resources[ids[b]].Index })
	for _, id := range ids {
		r := g.Resources[id]
		base := fmt.Sprintf("spec.resources[%d]", r.Index)
		tmpl := base + ".template"
		if r.External {
			tmpl = base + ".externalRef"
		}
		for _, f := range r.Fields {
			for _, e := range f.Expressions {
				w.calls(id, formatPath(tmpl, f.Segments...), e)
			}
		}
		for j, d := range r.ForEach {
			w.calls(id, formatPath(fmt.Sprintf("%s.forEach[%d]", base, j), d.Name), d.Expression)
		}
		for j, e := range r.IncludeWhen {
			w.calls(id, fmt.Sprintf("%s.includeWhen[%d]", base, j), e)
		}
		for j, e := range r.ReadyWhen {
			w.calls(id, fmt.Sprintf("%s.readyWhen[%d]", base, j), e)
		}
	}
	for _, f := range g.Status {
		for _, e := range f.Expressions {
			w.calls("", formatPath("spec.schema.status", f.Segments...), e)
		}
	}
}

func (w *kroWarnings) calls(resource, path string, e *Expression) {
	if e == nil {
		return
	}
	for _, fn := range kroscopeOnlyCalls(e) {
		w.add(resource, path, "kro has no CEL function %s (in ${%s})", fn, e.Source)
	}
}

// numberTypes calls found for every SimpleSchema field under m whose type
// uses "number", which kroscope reads as float and kro as an unknown
// custom type.
func numberTypes(path string, m map[string]any, found func(path string)) {
	for _, k := range sortedKeys(m) {
		p := joinPath(path, k)
		switch v := m[k].(type) {
		case map[string]any:
			numberTypes(p, v, found)
		case string:
			fs, err := simpleschema.ParseField(v)
			if err != nil {
				continue
			}
			t := fs.Type
			for {
				if rest, ok := strings.CutPrefix(t, "[]"); ok {
					t = rest
				} else if rest, ok := strings.CutPrefix(t, "map[string]"); ok {
					t = rest
				} else {
					break
				}
			}
			if strings.TrimSpace(t) == "number" {
				found(p)
			}
		}
	}
}

// kroscopeOnlyCalls returns the kroscope-only functions e calls, in order
// of first use. The checked AST names namespaced functions in full (a
// parsed one would show math.ceil(x) as a method call on "math").
func kroscopeOnlyCalls(e *Expression) []string {
	a := e.ast
	if a == nil {
		if e.env == nil {
			return nil
		}
		checked, issues := e.env.Compile(e.Source)
		if issues != nil && issues.Err() != nil {
			return nil
		}
		a = checked
	}
	var found []string
	seen := map[string]bool{}
	ast.PreOrderVisit(a.NativeRep().Expr(), ast.NewExprVisitor(func(x ast.Expr) {
		if x.Kind() != ast.CallKind {
			return
		}
		fn := x.AsCall().FunctionName()
		if n, ok := macroNames[fn]; ok {
			fn = n
		}
		for _, p := range kroscopeOnlyFunctions {
			if strings.HasPrefix(fn, p) && !seen[fn] {
				seen[fn] = true
				found = append(found, fn)
			}
		}
	}))
	return found
}
