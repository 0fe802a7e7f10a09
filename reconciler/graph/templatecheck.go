package graph

import (
	"fmt"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// checkTemplate walks a template next to its kind's OpenAPI schema (known
// only with a SchemaResolver): a field the kind does not have, a literal of
// the wrong type, a standalone expression whose type cannot fit the field,
// or a string template where no string is expected are errors.
func (bd *build) checkTemplate(r *Resource) {
	s := bd.schemas[r.ID]
	if s == nil || r.External {
		return
	}
	tc := &templateCheck{bd: bd, r: r, fields: map[string]*Field{}, base: fmt.Sprintf("spec.resources[%d].template", r.Index)}
	for _, f := range r.Fields {
		tc.fields[f.Path] = f
	}
	tc.walk(r.Template, s, nil)
}

// templateCheck walks one resource's template beside its kind's schema.
type templateCheck struct {
	bd     *build
	r      *Resource
	fields map[string]*Field // the templated fields by path
	base   string            // the template's path in the definition
}

// walk checks the value v at segs against its schema s.
func (tc *templateCheck) walk(v any, s *spec.Schema, segs []any) {
	if s == nil || preservesUnknown(s) {
		return
	}
	path := formatPath("", segs...)
	if str, ok := v.(string); ok {
		if f := tc.fields[path]; f != nil {
			tc.bd.checkFieldType(tc.r, tc.base, f, s)
			return
		}
		if strings.Contains(str, "${") {
			return // an expression that did not compile: its error is reported
		}
	}
	if isIntOrString(s) {
		return
	}
	switch val := v.(type) {
	case map[string]any:
		tc.object(val, s, segs)
	case []any:
		if !hasType(s, "array") {
			tc.bd.errorf(tc.r.ID, formatPath(tc.base, segs...), "", "%s expects %s, got a list", orRoot(path), schemaType(s))
			return
		}
		if s.Items != nil && s.Items.Schema != nil {
			for i, e := range val {
				tc.walk(e, s.Items.Schema, append(append([]any{}, segs...), i))
			}
		}
	case nil:
	default:
		want := schemaType(s)
		got := typeName(v)
		ok := got == want || (got == "number" && want == "integer" && isWhole(v)) || want == ""
		if !ok {
			tc.bd.errorf(tc.r.ID, formatPath(tc.base, segs...), "", "%s expects %s, got %s %v", path, want, got, v)
		}
	}
}

// object checks an object's fields: each must be a property of the kind, or
// allowed by additionalProperties.
func (tc *templateCheck) object(val map[string]any, s *spec.Schema, segs []any) {
	if !hasType(s, "object") {
		tc.bd.errorf(tc.r.ID, formatPath(tc.base, segs...), "", "%s expects %s, got an object", orRoot(formatPath("", segs...)), schemaType(s))
		return
	}
	for _, k := range sortedKeys(val) {
		child, known := s.Properties[k]
		switch {
		case known:
			tc.walk(val[k], &child, append(append([]any{}, segs...), k))
		case s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
			tc.walk(val[k], s.AdditionalProperties.Schema, append(append([]any{}, segs...), k))
		case s.AdditionalProperties != nil && s.AdditionalProperties.Allows:
		case len(s.Properties) == 0:
		default:
			tc.bd.errorf(tc.r.ID, formatPath(tc.base, append(append([]any{}, segs...), k)...), "check the spelling against the "+tc.r.GVK.Kind+" schema",
				"%s has no field %q%s", tc.r.GVK.Kind, k, schemaSource(tc.bd.b.resolver))
		}
	}
}

// checkFieldType checks a templated field against the schema type.
func (bd *build) checkFieldType(r *Resource, base string, f *Field, s *spec.Schema) {
	want := schemaType(s)
	if isIntOrString(s) || want == "" {
		return
	}
	if !f.Standalone {
		if want != "string" {
			bd.errorf(r.ID, formatPath(base, f.Segments...), "use a single ${...} so the value keeps its type",
				"%s expects %s, but a string template always gives a string", f.Path, want)
		}
		return
	}
	if !celFits(f.out, want) {
		bd.errorf(r.ID, formatPath(base, f.Segments...), "convert it, e.g. int(...) or string(...)",
			"%s expects %s, but ${%s} returns %s", f.Path, want, f.Expressions[0].Source, f.out.String())
	}
}

// celFits reports whether a value of CEL type t can be written where the
// OpenAPI type want is expected; dyn always can.
func celFits(t *cel.Type, want string) bool {
	if t == nil {
		return true
	}
	switch t.Kind() {
	case types.DynKind, types.AnyKind, types.NullTypeKind, types.ErrorKind:
		return true
	case types.OpaqueKind:
		if t.TypeName() == "optional_type" && len(t.Parameters()) == 1 {
			return celFits(t.Parameters()[0], want)
		}
		return true
	case types.BoolKind:
		return want == "boolean"
	case types.IntKind, types.UintKind:
		return want == "integer" || want == "number"
	case types.DoubleKind:
		return want == "number"
	case types.StringKind:
		return want == "string"
	case types.ListKind:
		return want == "array"
	case types.MapKind, types.StructKind:
		return want == "object"
	}
	return true
}

func preservesUnknown(s *spec.Schema) bool {
	v, ok := s.Extensions["x-kubernetes-preserve-unknown-fields"].(bool)
	return ok && v
}

func isIntOrString(s *spec.Schema) bool {
	v, ok := s.Extensions["x-kubernetes-int-or-string"].(bool)
	return ok && v
}

func hasType(s *spec.Schema, t string) bool { return len(s.Type) == 0 || s.Type.Contains(t) }

func schemaType(s *spec.Schema) string {
	if len(s.Type) == 0 {
		return ""
	}
	return s.Type[0]
}

func isWhole(v any) bool {
	switch n := v.(type) {
	case int64, int:
		return true
	case float64:
		return n == float64(int64(n))
	}
	return false
}

func orRoot(path string) string {
	if path == "" {
		return "the template"
	}
	return path
}

// SchemaSourcer is a SchemaResolver that can say whose schemas it serves
// ("Kubernetes 1.34"), for the errors that a field is not in them: the same
// template is valid against another version's.
type SchemaSourcer interface {
	SchemaSource() string
}

func schemaSource(r SchemaResolver) string {
	if s, ok := r.(SchemaSourcer); ok && s.SchemaSource() != "" {
		return " in " + s.SchemaSource()
	}
	return ""
}
