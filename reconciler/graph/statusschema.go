package graph

import (
	"fmt"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiservercel "k8s.io/apiserver/pkg/cel"
)

// The instance CRD's status schema must be the one kro generates for the
// same graph: a CRD that differs makes kro and kroscope rewrite each other's
// CRD, and prunes or rejects status values the other tool writes. So a
// status field's schema follows from its expression's checked CEL type the
// way kro derives it: typed resources (from the kinds' OpenAPI) give typed
// fields, object types are expanded field by field from their declaration,
// and whatever has no OpenAPI equivalent keeps unknown fields.

// objectTypeIndex finds the declaration of a CEL object type by name, to
// expand a status expression whose type is an object (or a list or map of
// objects) into its properties.
type objectTypeIndex map[string]*apiservercel.DeclType

// indexObjectTypes records every object type declared under roots.
func indexObjectTypes(roots ...*apiservercel.DeclType) objectTypeIndex {
	idx := objectTypeIndex{}
	var walk func(t *apiservercel.DeclType, depth int)
	walk = func(t *apiservercel.DeclType, depth int) {
		if t == nil || depth > maxTypeDepth {
			return
		}
		switch {
		case t.IsObject():
			if _, seen := idx[t.TypeName()]; seen {
				return
			}
			idx[t.TypeName()] = t
			for _, f := range t.Fields {
				if f != nil {
					walk(f.Type, depth+1)
				}
			}
		case t.IsList(), t.IsMap():
			walk(t.ElemType, depth+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
	return idx
}

// maxTypeDepth bounds the walk of a type: OpenAPI schemas are trees, but a
// malformed one must not recurse forever.
const maxTypeDepth = 64

func preserveUnknown(description string) apiextensionsv1.JSONSchemaProps {
	t := true
	return apiextensionsv1.JSONSchemaProps{Description: description, XPreserveUnknownFields: &t}
}

// primitiveSchema is the schema of a scalar CEL type, by its name.
func primitiveSchema(name string) (apiextensionsv1.JSONSchemaProps, bool) {
	switch name {
	case "bool":
		return apiextensionsv1.JSONSchemaProps{Type: "boolean"}, true
	case "int", "uint":
		return apiextensionsv1.JSONSchemaProps{Type: "integer"}, true
	case "double":
		return apiextensionsv1.JSONSchemaProps{Type: "number"}, true
	case "string":
		return apiextensionsv1.JSONSchemaProps{Type: "string"}, true
	case "bytes":
		return apiextensionsv1.JSONSchemaProps{Type: "string", Format: "byte"}, true
	case "null_type":
		return preserveUnknown("null type - any value allowed"), true
	}
	return apiextensionsv1.JSONSchemaProps{}, false
}

// celTypeSchema is the OpenAPI schema of a status field whose expression
// has type t. A nil type (a field that was not checked) keeps unknown
// fields.
func (idx objectTypeIndex) celTypeSchema(t *cel.Type) apiextensionsv1.JSONSchemaProps {
	if t == nil {
		return preserveUnknown("")
	}
	name := t.String()
	if s, ok := primitiveSchema(name); ok {
		return s
	}
	switch t.Kind() {
	case types.ListKind:
		if ps := t.Parameters(); len(ps) > 0 {
			items := idx.celTypeSchema(ps[0])
			return apiextensionsv1.JSONSchemaProps{Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &items}}
		}
		return apiextensionsv1.JSONSchemaProps{Type: "array"}
	case types.MapKind:
		if ps := t.Parameters(); len(ps) > 1 {
			v := idx.celTypeSchema(ps[1])
			return apiextensionsv1.JSONSchemaProps{Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &v}}
		}
		return apiextensionsv1.JSONSchemaProps{Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true}}
	case types.StructKind:
		if d, ok := idx[name]; ok {
			return declTypeSchema(d, 0)
		}
		return apiextensionsv1.JSONSchemaProps{Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true}}
	case types.DynKind:
		return preserveUnknown("")
	case types.TimestampKind:
		return apiextensionsv1.JSONSchemaProps{Description: "Timestamp representing a creation time", Type: "string", Format: "date-time"}
	}
	return preserveUnknown(fmt.Sprintf("unknown CEL type: %s", name))
}

// declTypeSchema expands a declared type (a field of a typed resource)
// into OpenAPI. Inside a declaration only the JSON scalars are typed:
// timestamps, durations and int-or-string fields keep unknown fields.
func declTypeSchema(d *apiservercel.DeclType, depth int) apiextensionsv1.JSONSchemaProps {
	if d == nil || depth > maxTypeDepth {
		return preserveUnknown("")
	}
	switch {
	case d.IsList():
		if d.ElemType == nil {
			return apiextensionsv1.JSONSchemaProps{Type: "array"}
		}
		items := declTypeSchema(d.ElemType, depth+1)
		return apiextensionsv1.JSONSchemaProps{Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &items}}
	case d.IsMap():
		if d.ElemType == nil {
			return apiextensionsv1.JSONSchemaProps{Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true}}
		}
		v := declTypeSchema(d.ElemType, depth+1)
		return apiextensionsv1.JSONSchemaProps{Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &v}}
	case !d.IsObject():
		if ct := d.CelType(); ct != nil {
			if s, ok := primitiveSchema(ct.String()); ok {
				return s
			}
		}
		return preserveUnknown("")
	}
	s := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{}}
	for _, f := range d.Fields {
		if f != nil {
			s.Properties[f.Name] = declTypeSchema(f.Type, depth+1)
		}
	}
	return s
}
