package graph

import (
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiservercel "k8s.io/apiserver/pkg/cel"
)

// schemaType returns the CEL type of the "schema" variable: the instance
// with apiVersion, kind, metadata (ObjectMeta) and spec typed from the
// SimpleSchema. Problems in the SimpleSchema are recorded; the spec is then
// typed dyn so expressions are still checked for everything else.
func (bd *build) schemaType() *apiservercel.DeclType {
	spec, err := specSchema(bd.rgd.Spec.Schema.Spec, bd.rgd.Spec.Schema.Types)
	var specType *apiservercel.DeclType
	if err != nil {
		for _, e := range err {
			e.RGD = bd.name
		}
		bd.errs = append(bd.errs, err...)
		specType = apiservercel.DynType
	} else {
		specType = declType(spec, "@schema.spec")
	}
	fields := map[string]*apiservercel.DeclField{
		"apiVersion": apiservercel.NewDeclField("apiVersion", apiservercel.StringType, true, nil, nil),
		"kind":       apiservercel.NewDeclField("kind", apiservercel.StringType, true, nil, nil),
		"metadata":   apiservercel.NewDeclField("metadata", objectMetaType("@schema.metadata"), true, nil, nil),
		"spec":       apiservercel.NewDeclField("spec", specType, true, nil, nil),
	}
	return apiservercel.NewObjectType("@schema", fields)
}

// specSchema turns the SimpleSchema spec into OpenAPI, for typing. The
// errors name the field.
func specSchema(spec, types map[string]any) (*apiextensionsv1.JSONSchemaProps, Errors) {
	c := &simpleTyper{types: types, resolving: map[string]bool{}}
	s := c.object(spec, "spec.schema.spec")
	if len(c.errs) > 0 {
		return nil, c.errs
	}
	return s, nil
}

// simpleTyper reads the type part of SimpleSchema fields ("<type> |
// markers"); the markers and the full CRD schema are the business of the
// simpleschema and crd packages.
type simpleTyper struct {
	types     map[string]any
	resolving map[string]bool
	errs      Errors
}

func (c *simpleTyper) errorf(path, fix, format string, args ...any) {
	c.errs = append(c.errs, &Error{Path: path, Message: fmt.Sprintf(format, args...), Fix: fix})
}

func (c *simpleTyper) object(m map[string]any, path string) *apiextensionsv1.JSONSchemaProps {
	s := &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{}}
	for _, k := range sortedKeys(m) {
		p := joinPath(path, k)
		if f := c.value(m[k], p); f != nil {
			s.Properties[k] = *f
		}
	}
	return s
}

func (c *simpleTyper) value(v any, path string) *apiextensionsv1.JSONSchemaProps {
	switch val := v.(type) {
	case map[string]any:
		return c.object(val, path)
	case string:
		typ := strings.TrimSpace(val)
		if i := strings.Index(typ, "|"); i >= 0 {
			typ = strings.TrimSpace(typ[:i])
		}
		return c.typeName(typ, path)
	}
	c.errorf(path, `write a type such as "string | default=x" or a nested map`, "field is a %s, not a SimpleSchema type", typeName(v))
	return nil
}

func (c *simpleTyper) typeName(typ, path string) *apiextensionsv1.JSONSchemaProps {
	switch {
	case typ == "string":
		return &apiextensionsv1.JSONSchemaProps{Type: "string"}
	case typ == "integer":
		return &apiextensionsv1.JSONSchemaProps{Type: "integer"}
	case typ == "boolean":
		return &apiextensionsv1.JSONSchemaProps{Type: "boolean"}
	case typ == "float" || typ == "number":
		return &apiextensionsv1.JSONSchemaProps{Type: "number"}
	case typ == "object":
		t := true
		return &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &t}
	case strings.HasPrefix(typ, "[]"):
		elem := c.typeName(strings.TrimSpace(typ[2:]), path+"[]")
		if elem == nil {
			return nil
		}
		return &apiextensionsv1.JSONSchemaProps{Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: elem}}
	case strings.HasPrefix(typ, "map["):
		end := strings.Index(typ, "]")
		if end < 0 || strings.TrimSpace(typ[4:end]) != "string" {
			c.errorf(path, "write map[string]T", "map type %q: keys must be string", typ)
			return nil
		}
		elem := c.typeName(strings.TrimSpace(typ[end+1:]), path+"[*]")
		if elem == nil {
			return nil
		}
		return &apiextensionsv1.JSONSchemaProps{Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: elem}}
	case typ == "":
		c.errorf(path, "write a type such as string, integer, boolean, float, object, []T or map[string]T", "type is empty")
		return nil
	}
	def, ok := c.types[typ]
	if !ok {
		c.errorf(path, "use string, integer, boolean, float, object, []T, map[string]T or a name from spec.schema.types", "unknown type %q", typ)
		return nil
	}
	if c.resolving[typ] {
		c.errorf(path, "break the cycle between custom types", "cyclic dependency in type %q", typ)
		return nil
	}
	c.resolving[typ] = true
	defer delete(c.resolving, typ)
	return c.value(def, "spec.schema.types."+typ)
}

// declType converts an OpenAPI schema into a CEL type; name prefixes the
// generated object type names, which must be unique in an environment.
func declType(s *apiextensionsv1.JSONSchemaProps, name string) *apiservercel.DeclType {
	if s == nil {
		return apiservercel.DynType
	}
	if s.XIntOrString {
		return apiservercel.DynType
	}
	switch s.Type {
	case "string":
		return apiservercel.StringType
	case "integer":
		return apiservercel.IntType
	case "number":
		return apiservercel.DoubleType
	case "boolean":
		return apiservercel.BoolType
	case "array":
		if s.Items == nil || s.Items.Schema == nil {
			return apiservercel.NewListType(apiservercel.DynType, -1)
		}
		return apiservercel.NewListType(declType(s.Items.Schema, name+"@"), -1)
	case "object":
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			return apiservercel.NewMapType(apiservercel.StringType, declType(s.AdditionalProperties.Schema, name+"@"), -1)
		}
		if len(s.Properties) == 0 {
			return apiservercel.NewMapType(apiservercel.StringType, apiservercel.DynType, -1)
		}
		fields := map[string]*apiservercel.DeclField{}
		for k, p := range s.Properties {
			p := p
			fields[k] = apiservercel.NewDeclField(k, declType(&p, name+"."+k), false, nil, nil)
		}
		return apiservercel.NewObjectType(name, fields)
	}
	return apiservercel.DynType
}

// objectMetaType is the part of ObjectMeta expressions may read.
func objectMetaType(name string) *apiservercel.DeclType {
	str := apiservercel.StringType
	strMap := apiservercel.NewMapType(str, str, -1)
	f := func(n string, t *apiservercel.DeclType) *apiservercel.DeclField {
		return apiservercel.NewDeclField(n, t, false, nil, nil)
	}
	fields := map[string]*apiservercel.DeclField{
		"name":              f("name", str),
		"generateName":      f("generateName", str),
		"namespace":         f("namespace", str),
		"uid":               f("uid", str),
		"resourceVersion":   f("resourceVersion", str),
		"generation":        f("generation", apiservercel.IntType),
		"creationTimestamp": f("creationTimestamp", str),
		"deletionTimestamp": f("deletionTimestamp", str),
		"labels":            f("labels", strMap),
		"annotations":       f("annotations", strMap),
		"finalizers":        f("finalizers", apiservercel.NewListType(str, -1)),
		"ownerReferences":   f("ownerReferences", apiservercel.NewListType(apiservercel.DynType, -1)),
		"managedFields":     f("managedFields", apiservercel.NewListType(apiservercel.DynType, -1)),
	}
	return apiservercel.NewObjectType(name, fields)
}

