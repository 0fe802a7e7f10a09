package graph

import (
	"testing"

	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/cel/openapi"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

func TestMemoSchemaBuildsSubSchemasOnce(t *testing.T) {
	s := &spec.Schema{SchemaProps: spec.SchemaProps{
		Type: []string{"object"},
		Properties: map[string]spec.Schema{
			"list": {SchemaProps: spec.SchemaProps{Type: []string{"array"}, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"string"}}}}}},
			"map":  {SchemaProps: spec.SchemaProps{Type: []string{"object"}, AdditionalProperties: &spec.SchemaOrBool{Allows: true, Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"integer"}}}}}},
			"none": {SchemaProps: spec.SchemaProps{Type: []string{"string"}}},
		},
	}}
	raw := &openapi.Schema{Schema: s}
	m := memoized(raw)
	if raw.Properties()["list"] == raw.Properties()["list"] {
		t.Fatal("the adaptor now keeps its sub-schemas: memoSchema may be unneeded")
	}
	p1, p2 := m.Properties(), m.Properties()
	if p1["list"] != p2["list"] || p1["list"].Items() != p2["list"].Items() {
		t.Error("sub-schemas are built again on each call")
	}
	if got := p1["list"].Items().Type(); got != "string" {
		t.Errorf("items type = %q, want string", got)
	}
	ap := p1["map"].AdditionalProperties()
	if ap == nil || !ap.Allows() || ap.Schema().Type() != "integer" || ap.Schema() != p1["map"].AdditionalProperties().Schema() {
		t.Errorf("additionalProperties = %+v, want the memoized integer schema", ap)
	}
	if p1["none"].Properties() != nil || p1["none"].Items() != nil || p1["none"].AdditionalProperties() != nil {
		t.Error("a string schema gained properties, items or additionalProperties")
	}
	if len(m.Properties()) != len(raw.Properties()) {
		t.Error("properties differ from the adaptor's")
	}
	var _ common.Schema = m
}
