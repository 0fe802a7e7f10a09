// Package simpleschema converts kro's SimpleSchema (the `spec` and `types` of
// a ResourceGraphDefinition's spec.schema) to an OpenAPI v3 schema the API
// server accepts as a structural CRD schema.
//
// A field is a string `"<type> | marker=value ..."` or a nested map (an
// inline object). Types: string, integer, boolean, float and number (both
// OpenAPI number), object (free-form), []T, map[string]T, and the names of
// custom types declared in spec.schema.types, which may use each other
// (a cycle is an error that names it).
//
// Markers: required, default, description, enum ("a,b,c"; string and
// integer), minimum, maximum, pattern, minLength, maxLength, minItems,
// maxItems, uniqueItems (a "set" list), listType and listMapKey, immutable
// (the rule `self == oldSelf`) and validation (a CEL rule with kro's message
// "validation failed"; rules keep their written order). Booleans are read
// as kro reads them (True, TRUE, 1, ...), `default=` is the empty string,
// and a repeated marker takes the last value, so what kro accepts gives the
// same OpenAPI here.
// A default is parsed for the field's type and checked against the field's
// other constraints with the API server's validator. An object whose fields
// have defaults, and none of which is required, defaults to {} so its
// fields' defaults apply without users writing `field: {}`.
package simpleschema

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// MaxTypeDepth bounds how deeply []T and map[string]T may nest.
const MaxTypeDepth = 16

// FieldError is one problem, located by a path like "spec.tags" or
// "types.Foo.bar". ToOpenAPI joins several with errors.Join.
type FieldError struct {
	Path    string
	Message string
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Message }

// ToOpenAPI converts a SimpleSchema spec map, and the custom types of
// spec.schema.types (nil when there are none), to the OpenAPI schema of the
// instance spec. It reports every problem it finds, not only the first.
func ToOpenAPI(spec map[string]any, types map[string]any) (*apiextensionsv1.JSONSchemaProps, error) {
	b := &builder{raw: types, done: map[string]*typeDef{}}
	// Resolve every custom type, used or not, so mistakes in unused types
	// are reported too; sorted for stable error order.
	for _, name := range sortedKeys(types) {
		b.resolve(name)
	}
	root := b.object("spec", spec)
	if len(b.errs) > 0 {
		return nil, errors.Join(b.errs...)
	}
	return root, nil
}

// typeDef is a resolved custom type.
type typeDef struct {
	schema *apiextensionsv1.JSONSchemaProps // nil when the type has errors
	// required is set by a `required=true` marker on an alias type
	// (`Name: "string | required=true"`): every field using it is required.
	required bool
}

type builder struct {
	raw       map[string]any
	done      map[string]*typeDef
	resolving []string // custom types being resolved, for cycle reports
	errs      []error
}

func (b *builder) fail(path, format string, args ...any) {
	b.errs = append(b.errs, &FieldError{Path: path, Message: fmt.Sprintf(format, args...)})
}

// object converts an inline object (a map of fields).
func (b *builder) object(path string, m map[string]any) *apiextensionsv1.JSONSchemaProps {
	s := &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{}}
	childDefault := false
	for _, name := range sortedKeys(m) {
		p := path + "." + name
		if name == "" {
			b.fail(path, "a field has an empty name")
			continue
		}
		child, required := b.field(p, m[name])
		if child == nil {
			continue
		}
		if required {
			s.Required = append(s.Required, name)
		}
		if child.Default != nil {
			childDefault = true
		}
		s.Properties[name] = *child
	}
	// An object whose fields have defaults defaults to {} itself, so users
	// need not write `service: {}` to get them; not when a field is
	// required, as {} would then be invalid.
	if childDefault && len(s.Required) == 0 {
		s.Default = &apiextensionsv1.JSON{Raw: []byte("{}")}
	}
	return s
}

// field converts one field: a definition string or an inline object. It
// returns nil after reporting an error.
func (b *builder) field(path string, v any) (*apiextensionsv1.JSONSchemaProps, bool) {
	switch v := v.(type) {
	case string:
		fs, err := ParseField(v)
		if err != nil {
			b.fail(path, "%v", err)
			return nil, false
		}
		s, required := b.typeSchema(path, fs.Type, 0)
		if s == nil {
			return nil, false
		}
		req, ok := b.applyMarkers(path, s, fs.Markers)
		if !ok {
			return nil, false
		}
		// As in kro, an alias type's required=true cannot be undone by
		// the field: required=false only leaves it as the type says.
		if req != nil && *req {
			required = true
		}
		return s, required
	case map[string]any:
		return b.object(path, v), false
	case nil:
		b.fail(path, `empty definition: write a type such as "string" or a map of fields`)
	default:
		b.fail(path, `must be a type string such as "string | required=true" or a map of fields, not %T %v`, v, v)
	}
	return nil, false
}

// typeSchema returns a fresh schema for a type expression, and whether the
// type itself makes its fields required.
func (b *builder) typeSchema(path, t string, depth int) (*apiextensionsv1.JSONSchemaProps, bool) {
	if depth > MaxTypeDepth {
		b.fail(path, "type nests deeper than %d levels", MaxTypeDepth)
		return nil, false
	}
	t = strings.TrimSpace(t)
	switch {
	case strings.HasPrefix(t, "[]"):
		items, _ := b.typeSchema(path, t[2:], depth+1)
		if items == nil {
			return nil, false
		}
		return &apiextensionsv1.JSONSchemaProps{Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: items}}, false
	case strings.HasPrefix(t, "map["):
		return b.mapSchema(path, t, depth), false
	}
	switch t {
	case "string", "integer", "boolean":
		return &apiextensionsv1.JSONSchemaProps{Type: t}, false
	case "float", "number":
		return &apiextensionsv1.JSONSchemaProps{Type: "number"}, false
	case "object":
		return &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr(true)}, false
	case "":
		b.fail(path, "missing type")
		return nil, false
	}
	if _, ok := b.raw[t]; !ok {
		b.fail(path, "unknown type %q: use string, integer, boolean, float, number, object, []T, map[string]T or a type declared in spec.schema.types", t)
		return nil, false
	}
	td := b.resolve(t)
	if td.schema == nil {
		return nil, false // its errors are reported under types.<name>
	}
	return td.schema.DeepCopy(), td.required
}

// mapSchema is the schema of map[string]T; nil after reporting an error.
func (b *builder) mapSchema(path, t string, depth int) *apiextensionsv1.JSONSchemaProps {
	key, val, ok := strings.Cut(t[len("map["):], "]")
	if !ok {
		b.fail(path, "type %q: missing ']' after the map key type", t)
		return nil
	}
	if strings.TrimSpace(key) != "string" {
		b.fail(path, "type %q: map keys must be string, not %q", t, key)
		return nil
	}
	if strings.TrimSpace(val) == "" {
		b.fail(path, "type %q: missing the map value type", t)
		return nil
	}
	vs, _ := b.typeSchema(path, val, depth+1)
	if vs == nil {
		return nil
	}
	return &apiextensionsv1.JSONSchemaProps{Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: vs}}
}

// resolve converts the custom type name (which exists in b.raw), once.
func (b *builder) resolve(name string) *typeDef {
	if td, ok := b.done[name]; ok {
		return td
	}
	path := "types." + name
	if i := slices.Index(b.resolving, name); i >= 0 {
		cycle := append(slices.Clone(b.resolving[i:]), name)
		b.fail("types."+b.resolving[i], "cyclic dependency in type %s: %s", b.resolving[i], strings.Join(cycle, " -> "))
		return &typeDef{}
	}
	b.resolving = append(b.resolving, name)
	defer func() { b.resolving = b.resolving[:len(b.resolving)-1] }()

	td := &typeDef{}
	switch {
	case isBuiltinName(name):
		b.fail(path, "%q is a built-in type and cannot be redeclared", name)
	case !isTypeName(name):
		b.fail(path, "invalid type name %q: use letters, digits and '_', starting with a letter", name)
	default:
		before := len(b.errs)
		switch v := b.raw[name].(type) {
		case map[string]any:
			td.schema = b.object(path, v)
		default:
			td.schema, td.required = b.field(path, v)
		}
		if len(b.errs) > before {
			td.schema = nil
		}
	}
	b.done[name] = td
	return td
}

func isBuiltinName(s string) bool {
	switch s {
	case "string", "integer", "boolean", "float", "number", "object", "map":
		return true
	}
	return false
}

func isTypeName(s string) bool {
	for i, r := range s {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || r != '_' && (r < '0' || r > '9')) {
			return false
		}
	}
	return s != ""
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

func ptr[T any](v T) *T { return &v }
