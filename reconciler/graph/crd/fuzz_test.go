package crd_test

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kroscope/kroscope/reconciler/graph/crd"
	"github.com/kroscope/kroscope/reconciler/graph/simpleschema"
)

// FuzzSchemaToCRD feeds SimpleSchema documents (spec and types) through
// ToOpenAPI and New. Neither may panic, and a schema ToOpenAPI accepts must
// make a CRD the API server's validation accepts, unless it carries CEL
// `validation=` rules (whose compilation only the CRD validation checks).
// Seeds are in testdata/fuzz.
func FuzzSchemaToCRD(f *testing.F) {
	f.Add("name: string | required=true\nreplicas: integer | default=1 minimum=1", "")
	f.Add("svc:\n  enabled: boolean | default=true\n  port: Port", "Port:\n  number: integer | default=80\n  name: string")
	f.Add(`tags: "[]string | uniqueItems=true maxItems=3 default=[\"a\"]"`, "")
	f.Add(`ports: "[]Port | listType=map listMapKey=name"`, "Port:\n  name: string\n  n: integer | default=1")
	f.Add("a: Name | immutable=true", "Name: string | required=true minLength=2")
	f.Fuzz(func(t *testing.T, specYAML, typesYAML string) {
		var spec, types map[string]any
		if yaml.Unmarshal([]byte(specYAML), &spec) != nil || yaml.Unmarshal([]byte(typesYAML), &types) != nil {
			return
		}
		s, err := simpleschema.ToOpenAPI(spec, types)
		if (s == nil) == (err == nil) {
			t.Fatalf("ToOpenAPI = %v, %v: want exactly one of schema and error", s, err)
		}
		if err != nil {
			return
		}
		_, err = crd.New(crd.Input{APIVersion: "v1alpha1", Kind: "Fuzz", Spec: s, GraphName: "fuzz"})
		if err != nil && !strings.Contains(specYAML+typesYAML, "validation") {
			t.Fatalf("ToOpenAPI accepted\n%s\n---\n%s\nbut the CRD is invalid: %v", specYAML, typesYAML, err)
		}
	})
}
