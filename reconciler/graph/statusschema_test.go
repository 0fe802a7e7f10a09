package graph

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kroscope/kroscope/test/graphs"
)

// deploymentResolver types every kind as a cut-down Deployment, with the
// field kinds kro's status typing distinguishes: integers, strings,
// date-time strings, int-or-string, arrays of objects and maps.
type deploymentResolver struct{}

func (deploymentResolver) ResolveSchema(schema.GroupVersionKind) (*spec.Schema, error) {
	str, integer := *spec.StringProperty(), *spec.Int32Property()
	ts := *spec.StringProperty()
	ts.Format = "date-time"
	ios := spec.Schema{}
	ios.Extensions = spec.Extensions{"x-kubernetes-int-or-string": true}
	obj := func(props map[string]spec.Schema) spec.Schema {
		return spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}, Properties: props}}
	}
	cond := obj(map[string]spec.Schema{"type": str, "status": str, "message": str, "lastTransitionTime": ts})
	root := obj(map[string]spec.Schema{
		"apiVersion": str, "kind": str,
		"metadata": obj(map[string]spec.Schema{"name": str, "namespace": str, "labels": *spec.MapProperty(&str), "creationTimestamp": ts}),
		"spec":     obj(map[string]spec.Schema{"replicas": integer, "maxSurge": ios}),
		"status": obj(map[string]spec.Schema{
			"availableReplicas": integer,
			"conditions":        *spec.ArrayProperty(&cond),
		}),
	})
	return &root, nil
}

var typedStatusRGD = graphs.RGD("typed-status", "TypedStatus", `spec:
  name: string
status:
  available: ${deployment.status.availableReplicas}
  conditions2: ${deployment.status.conditions}
  firstCondition: ${deployment.status.conditions[0]}
  labels: ${deployment.metadata.labels}
  surge: ${deployment.spec.maxSurge}
  created: ${timestamp(deployment.metadata.creationTimestamp)}
  url: http://${schema.spec.name}:${string(deployment.spec.replicas)}
  name: ${schema.spec.name}
  flag: ${deployment.spec.replicas > 1}
  ratio: ${double(deployment.spec.replicas) / 2.0}
  nested:
    count: ${deployment.spec.replicas}
  list:
    - ${deployment.spec.replicas}`,
	graphs.Template("deployment", "apps/v1", "Deployment", "name: ${schema.spec.name}", "spec:\n  replicas: 1"))

// The status schema follows the expressions' types as kro derives them
// (facts from kro v0.9.4's CRDs for the same expressions): scalars typed,
// objects expanded from the kind's schema, timestamps and int-or-string
// inside an object kept unknown, a timestamp result a date-time string,
// dyn kept unknown.
func TestStatusSchemaTypedAsKro(t *testing.T) {
	g := buildOne(t, typedStatusRGD, WithSchemaResolver(deploymentResolver{}))
	st := g.Instance.CRD.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"]
	got := func(field string) string {
		b, _ := json.Marshal(st.Properties[field])
		return string(b)
	}
	cond := `{"type":"object","properties":{"lastTransitionTime":{"x-kubernetes-preserve-unknown-fields":true},` +
		`"message":{"type":"string"},"status":{"type":"string"},"type":{"type":"string"}}}`
	want := map[string]string{
		"available":      `{"type":"integer"}`,
		"conditions2":    `{"type":"array","items":` + cond + `}`,
		"firstCondition": cond,
		"labels":         `{"type":"object","additionalProperties":{"type":"string"}}`,
		"surge":          `{"x-kubernetes-preserve-unknown-fields":true}`,
		"created":        `{"description":"Timestamp representing a creation time","type":"string","format":"date-time"}`,
		"url":            `{"type":"string"}`,
		"name":           `{"type":"string"}`,
		"flag":           `{"type":"boolean"}`,
		"ratio":          `{"type":"number"}`,
		"nested":         `{"type":"object","properties":{"count":{"type":"integer"}}}`,
		"list":           `{"type":"array","items":{"type":"integer"}}`,
	}
	for field, w := range want {
		if g := got(field); g != w {
			t.Errorf("status.%s:\n got %s\nwant %s", field, g, w)
		}
	}

	// Without a resolver (kroscope validate, graph) resources are dyn and
	// their fields keep unknown fields; the schema's own fields stay typed.
	g = buildOne(t, typedStatusRGD)
	st = g.Instance.CRD.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"]
	if g := got("available"); !strings.Contains(g, "preserve-unknown") {
		t.Errorf("untyped status.available = %s, want preserve-unknown", g)
	}
	if g := got("name"); g != `{"type":"string"}` {
		t.Errorf("untyped status.name = %s, want a string", g)
	}
}

// freeFormResolver types every kind as a CRD whose spec keeps unknown
// fields and whose status is typed.
type freeFormResolver struct{}

func (freeFormResolver) ResolveSchema(schema.GroupVersionKind) (*spec.Schema, error) {
	str := *spec.StringProperty()
	free := spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}, Properties: map[string]spec.Schema{"known": str}}}
	free.Extensions = spec.Extensions{"x-kubernetes-preserve-unknown-fields": true}
	// additionalProperties: true without a schema: the OpenAPI-to-CEL
	// converter cannot type it; the kind must then stay dyn, not panic.
	root := spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}, Properties: map[string]spec.Schema{
		"apiVersion": str, "kind": str,
		"metadata": {SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}, Properties: map[string]spec.Schema{"name": str}}},
		"spec":     free,
		"status":   {SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}, Properties: map[string]spec.Schema{"phase": str}}},
	}}}
	return &root, nil
}

// untypeableResolver serves a schema whose root has no type, which the
// converter cannot type. (Until k8s.io/apiserver v0.36 an object with
// additionalProperties: true and no schema was untypeable too; from then
// on, as kro v0.9.4 runs it, it types as an object without fields.)
type untypeableResolver struct{}

func (untypeableResolver) ResolveSchema(schema.GroupVersionKind) (*spec.Schema, error) {
	str := *spec.StringProperty()
	s := spec.Schema{SchemaProps: spec.SchemaProps{Properties: map[string]spec.Schema{
		"apiVersion": str, "kind": str,
		"metadata": {SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}, Properties: map[string]spec.Schema{"name": str}}},
		"spec":     {SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}, AdditionalProperties: &spec.SchemaOrBool{Allows: true}}},
	}}}
	return &s, nil
}

const freeFormRGD = `apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: free-form}
spec:
  schema:
    apiVersion: v1alpha1
    kind: FreeForm
    status:
      anything: ${thing.spec.forProvider.region}
      known: ${thing.spec.known}
      phase: ${thing.status.phase}
  resources:
    - id: thing
      template:
        apiVersion: example.com/v1
        kind: Thing
        metadata:
          name: thing
        spec:
          forProvider:
            region: eu
`

// As in kro, a field an object with x-kubernetes-preserve-unknown-fields
// does not declare reads as dyn; a field a typed object lacks is an error;
// a kind the converter cannot type stays dyn.
func TestTypedPreserveUnknownFields(t *testing.T) {
	g := buildOne(t, freeFormRGD, WithSchemaResolver(freeFormResolver{}))
	st := g.Instance.CRD.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"]
	if p := st.Properties["anything"]; p.XPreserveUnknownFields == nil || !*p.XPreserveUnknownFields {
		t.Errorf("status.anything = %+v, want preserve-unknown (dyn)", p)
	}
	if p := st.Properties["known"]; p.Type != "string" {
		t.Errorf("status.known = %+v, want a string", p)
	}
	bad := strings.Replace(freeFormRGD, "${thing.status.phase}", "${thing.status.phaze}", 1)
	if _, err := tryBuild(t, bad, WithSchemaResolver(freeFormResolver{})); err == nil || !strings.Contains(err.Error(), "phaze") {
		t.Errorf("a typo in a typed object: err = %v", err)
	}
	if _, err := tryBuild(t, freeFormRGD, WithSchemaResolver(untypeableResolver{})); err != nil {
		t.Errorf("a kind that cannot be typed: %v", err)
	}
}
