package graph

import (
	"encoding/base64"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kroscope/kroscope/test/graphs"
)

// secretResolver types Secrets as the API server's OpenAPI does: data is a
// map of base64 strings (format byte).
type secretResolver struct{}

func (secretResolver) ResolveSchema(schema.GroupVersionKind) (*spec.Schema, error) {
	str := *spec.StringProperty()
	b := *spec.StringProperty()
	b.Format = "byte"
	obj := func(props map[string]spec.Schema) spec.Schema {
		return spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}, Properties: props}}
	}
	root := obj(map[string]spec.Schema{
		"apiVersion": str, "kind": str,
		"metadata": obj(map[string]spec.Schema{"name": str, "namespace": str}),
		"data":     *spec.MapProperty(&b),
	})
	return &root, nil
}

var typedSecretRGD = graphs.RGD("typed-secret", "TypedSecret", "",
	graphs.ExternalRef("creds", "v1", "Secret", "creds"),
	graphs.ConfigMap("cm", "${schema.metadata.name}", "token: ${string(creds.data.token)}"))

// TestObservedObjectsReadThroughTheirSchema: where the checker typed a
// resource from its kind's schema, the observed object is read the same
// way at run time, as kro reads it: a Secret's data is bytes, so
// string(creds.data.token) is the decoded token, not its base64 text.
func TestObservedObjectsReadThroughTheirSchema(t *testing.T) {
	g := buildOne(t, typedSecretRGD, WithSchemaResolver(secretResolver{}))
	vars := Vars{
		SchemaIdentifier: map[string]any{"metadata": map[string]any{"name": "x", "namespace": "ns"}},
		"creds": map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "creds"},
			"data": map[string]any{"token": base64.StdEncoding.EncodeToString([]byte("s3cret"))}},
	}
	u, err := g.Resources["cm"].Render(vars)
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructuredString(u.Object, "data", "token"); got != "s3cret" {
		t.Errorf("data.token = %q, want the decoded token", got)
	}
}

func unstructuredString(m map[string]any, path ...string) (string, bool, error) {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return "", false, nil
		}
		cur = mm[p]
	}
	s, ok := cur.(string)
	return s, ok, nil
}
