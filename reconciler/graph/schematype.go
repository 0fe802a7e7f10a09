package graph

import (
	"errors"

	"github.com/kroscope/kroscope/reconciler/graph/simpleschema"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiservercel "k8s.io/apiserver/pkg/cel"
)

// schemaType returns the CEL type of the "schema" variable: the instance
// with apiVersion, kind, metadata (ObjectMeta) and spec typed from the
// SimpleSchema. Problems in the SimpleSchema are recorded; the spec is then
// typed dyn so expressions are still checked for everything else.
func (bd *build) schemaType() *apiservercel.DeclType {
	spec, err := specSchema(bd.rgd.Spec.Schema.Spec, bd.rgd.Spec.Schema.Types)
	bd.spec = spec
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

// specSchema turns the SimpleSchema spec into OpenAPI with the
// simpleschema package; its field errors become Errors under spec.schema.
func specSchema(spec, types map[string]any) (*apiextensionsv1.JSONSchemaProps, Errors) {
	s, err := simpleschema.ToOpenAPI(spec, types)
	if err == nil {
		return s, nil
	}
	var errs Errors
	for _, e := range flatten(err) {
		var fe *simpleschema.FieldError
		if errors.As(e, &fe) {
			errs = append(errs, &Error{Path: "spec.schema." + fe.Path, Message: fe.Message,
				Fix: "see the SimpleSchema syntax: \"<type> | marker=value ...\""})
		} else {
			errs = append(errs, &Error{Path: "spec.schema.spec", Message: e.Error()})
		}
	}
	return nil, errs
}

// flatten unwraps errors.Join trees into their leaves.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
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
		// An object that keeps unknown fields ("object" in SimpleSchema)
		// holds anything; one with no fields (no spec declared, or `{}`)
		// holds nothing, so reading a field of it is an error, as in kro.
		if s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields {
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
