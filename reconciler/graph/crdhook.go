package graph

import (
	"github.com/kroscope/kroscope/reconciler/graph/crd"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// crd generates Graph.Instance.CRD with the crd package, its status schema
// inferred from the status expressions' types.
func (bd *build) crd(g *Graph) {
	s := bd.rgd.Spec.Schema
	var rules []crd.ValidationRule
	for _, v := range s.Validation {
		rules = append(rules, crd.ValidationRule{Expression: v.Expression, Message: v.Message})
	}
	for _, f := range g.Status {
		if len(f.Segments) > 0 && (f.Segments[0] == crd.StatusState || f.Segments[0] == crd.StatusConditions) {
			bd.errorf("", "spec.schema.status."+f.Path, "choose another name: kroscope writes status."+f.Segments[0].(string)+" itself",
				"status field %q is reserved", f.Segments[0])
		}
	}
	if len(bd.errs) > 0 {
		return
	}
	out, err := crd.New(crd.Input{
		Group:          g.Instance.GVK.Group,
		APIVersion:     s.APIVersion,
		Kind:           s.Kind,
		Spec:           bd.spec,
		Status:         statusSchema(g, bd.objectTypes),
		PrinterColumns: s.AdditionalPrinterColumns,
		Validation:     rules,
		GraphName:      g.Name,
		ClusterScoped:  !g.Instance.Namespaced,
		ShortNames:     s.ShortNames,
		Categories:     s.Categories,
		Labels:         s.Metadata.Labels,
		Annotations:    s.Metadata.Annotations,
	})
	if err != nil {
		for _, e := range flatten(err) {
			bd.errorf("", "spec.schema", "", "instance CRD: %v", e)
		}
		return
	}
	g.Instance.CRD = out
}

// statusSchema is the OpenAPI schema of the status projections, nested as
// the status block is.
func statusSchema(g *Graph, types objectTypeIndex) *apiextensionsv1.JSONSchemaProps {
	if len(g.Status) == 0 {
		return nil
	}
	s := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{}}
	for _, f := range g.Status {
		addSchemaAt(&s, f.Segments, types.celTypeSchema(g.statusTypes[f.Path]))
	}
	return &s
}

// addSchemaAt places leaf at segs under s: a string segment is an object
// property, an index makes s an array whose items every element shares.
// Elements of different types make the items preserve-unknown, so each
// element can be written.
func addSchemaAt(s *apiextensionsv1.JSONSchemaProps, segs []any, leaf apiextensionsv1.JSONSchemaProps) {
	switch k := segs[0].(type) {
	case string:
		if s.Type == "" {
			s.Type = "object"
		}
		if s.Properties == nil {
			s.Properties = map[string]apiextensionsv1.JSONSchemaProps{}
		}
		child := s.Properties[k]
		if len(segs) == 1 {
			child = leaf
		} else {
			addSchemaAt(&child, segs[1:], leaf)
		}
		s.Properties[k] = child
	case int:
		s.Type = "array"
		first := s.Items == nil
		if first {
			s.Items = &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{}}
		}
		if len(segs) > 1 {
			addSchemaAt(s.Items.Schema, segs[1:], leaf)
			return
		}
		if first {
			*s.Items.Schema = leaf
		} else if !equality.Semantic.DeepEqual(*s.Items.Schema, leaf) {
			preserve := true
			*s.Items.Schema = apiextensionsv1.JSONSchemaProps{XPreserveUnknownFields: &preserve}
		}
	}
}
