package graph

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/cel/openapi"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// unknownFieldsResolver types every kind as kro's check-unknown-fields CRD
// does: spec.config keeps unknown fields and lists no properties; spec.items
// is a list of such objects.
type unknownFieldsResolver struct{}

func (unknownFieldsResolver) ResolveSchema(gvk schema.GroupVersionKind) (*spec.Schema, error) {
	if gvk.Kind != "AllowUnknown" {
		return nil, errors.New("not served")
	}
	str := *spec.StringProperty()
	free := spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}}}
	free.Extensions = spec.Extensions{"x-kubernetes-preserve-unknown-fields": true}
	obj := func(props map[string]spec.Schema) spec.Schema {
		return spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}, Properties: props}}
	}
	root := obj(map[string]spec.Schema{
		"apiVersion": str, "kind": str,
		"metadata": obj(map[string]spec.Schema{"name": str}),
		"spec":     obj(map[string]spec.Schema{"config": free, "name": str, "items": *spec.ArrayProperty(&free)}),
	})
	return &root, nil
}

const unknownFieldsRGD = `apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: check-unknown-fields}
spec:
  schema:
    apiVersion: v1alpha1
    kind: AllowUnknownInstance
  resources:
  - id: example
    template:
      apiVersion: kro.run/v1alpha1
      kind: AllowUnknown
      metadata: {name: example}
      spec:
        config: {foo: bar}
  - id: configmap
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: check-unknown-fields}
      data:
        foo: ${example.spec.config.foo}
        deep: ${string(example.spec.config.nested.n + 1)}
        item: ${example.spec.items[0].x}
        name: ${example.spec.name}
        has: ${string(has(example.spec.config.foo))}
        in: ${string('foo' in dyn(example.spec.config))}
        items: ${example.spec.items.map(i, i.x).join(',')}
        same: "${string(dyn(example.spec) == {'name': 'n1', 'config': {'foo': 'bar', 'nested': {'n': 41}}, 'items': [{'x': 'first'}]})}"
        other: "${string(dyn(example.spec) == {'name': 'n1', 'config': {'foo': 'baz', 'nested': {'n': 41}}, 'items': [{'x': 'first'}]})}"
`

// TestFreeFormFieldsReadAsStored: a field whose schema lists no properties
// (x-kubernetes-preserve-unknown-fields) reads as the object holds it, as
// kro reads it, not as the empty object UnstructuredToVal shows.
func TestFreeFormFieldsReadAsStored(t *testing.T) {
	g := buildOne(t, unknownFieldsRGD, WithSchemaResolver(unknownFieldsResolver{}))
	vars := Vars{
		SchemaIdentifier: map[string]any{"metadata": map[string]any{"name": "x", "namespace": "ns"}},
		"example": map[string]any{"apiVersion": "kro.run/v1alpha1", "kind": "AllowUnknown",
			"metadata": map[string]any{"name": "example"},
			"spec": map[string]any{"name": "n1",
				"config": map[string]any{"foo": "bar", "nested": map[string]any{"n": int64(41)}},
				"items":  []any{map[string]any{"x": "first"}}}},
	}
	u, err := g.Resources["configmap"].Render(vars)
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"foo": "bar", "deep": "42", "item": "first", "name": "n1",
		"has": "true", "in": "true", "items": "first", "same": "true", "other": "false"} {
		if got, _, _ := unstructuredString(u.Object, "data", key); got != want {
			t.Errorf("data.%s = %q, want %q", key, got, want)
		}
	}
}

func TestReadsNative(t *testing.T) {
	obj := func(p spec.SchemaProps, ext spec.Extensions) common.Schema {
		return &openapi.Schema{Schema: &spec.Schema{SchemaProps: p, VendorExtensible: spec.VendorExtensible{Extensions: ext}}}
	}
	str := spec.StringProperty()
	num := spec.Float64Property()
	keep := spec.Extensions{"x-kubernetes-preserve-unknown-fields": true}
	for _, c := range []struct {
		name string
		s    common.Schema
		want bool
	}{
		{"object, no properties, keeps unknown", obj(spec.SchemaProps{Type: spec.StringOrArray{"object"}}, keep), true},
		{"object, no properties", obj(spec.SchemaProps{Type: spec.StringOrArray{"object"}}, nil), true},
		{"object with properties", obj(spec.SchemaProps{Type: spec.StringOrArray{"object"}, Properties: map[string]spec.Schema{"a": *str}}, keep), false},
		{"map of strings", obj(spec.SchemaProps{Type: spec.StringOrArray{"object"}, AdditionalProperties: &spec.SchemaOrBool{Schema: str}}, nil), false},
		{"embedded resource", obj(spec.SchemaProps{Type: spec.StringOrArray{"object"}}, spec.Extensions{"x-kubernetes-embedded-resource": true}), false},
		{"untyped, keeps unknown", obj(spec.SchemaProps{}, keep), true},
		{"int-or-string", obj(spec.SchemaProps{}, spec.Extensions{"x-kubernetes-int-or-string": true}), false},
		{"quantity (oneOf string, number)", obj(spec.SchemaProps{OneOf: []spec.Schema{*str, *num}}, nil), true},
		{"string", obj(spec.SchemaProps{Type: spec.StringOrArray{"string"}}, nil), false},
	} {
		if got := readsNative(c.s); got != c.want {
			t.Errorf("%s: readsNative = %v, want %v", c.name, got, c.want)
		}
	}
}
