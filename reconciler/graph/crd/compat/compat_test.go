package compat

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// crdWithSpec is a one-version CRD whose spec schema is the given YAML.
func crdWithSpec(t *testing.T, specYAML string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	var spec apiextensionsv1.JSONSchemaProps
	if err := yaml.Unmarshal([]byte(specYAML), &spec); err != nil {
		t.Fatal(err)
	}
	return &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
			Name: "v1alpha1", Served: true, Storage: true,
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
				Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": spec},
			}},
			Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
		}},
	}}
}

const base = `
type: object
required: [name]
properties:
  name: {type: string}
  replicas: {type: integer, default: 1, minimum: 1, maximum: 10}
  tier: {type: string, enum: [a, b]}
  tags: {type: array, items: {type: string, maxLength: 20}}
`

func TestBreaking(t *testing.T) {
	for name, tc := range map[string]struct {
		new  string
		want []string // substrings, one per change; none means compatible
	}{
		"same":                {base, nil},
		"optional added":      {base + "  extra: {type: string}\n", nil},
		"required w/ default": {strings.Replace(base, "[name]", "[name, extra]", 1) + "  extra: {type: string, default: x}\n", nil},
		"required added":      {strings.Replace(base, "[name]", "[name, extra]", 1) + "  extra: {type: string}\n", []string{"spec.extra: new required property without a default"}},
		"removed":             {strings.Replace(base, "  tier: {type: string, enum: [a, b]}\n", "", 1), []string{"spec.tier: property removed"}},
		"type":                {strings.Replace(base, "name: {type: string}", "name: {type: integer}", 1), []string{"spec.name: type changed from string to integer"}},
		"newly required":      {strings.Replace(base, "[name]", "[name, tier]", 1), []string{"spec.tier: newly required"}},
		"enum narrowed":       {strings.Replace(base, "[a, b]", "[a]", 1), []string{`spec.tier: enum value "b" removed`}},
		"enum widened":        {strings.Replace(base, "[a, b]", "[a, b, c]", 1), nil},
		"minimum raised":      {strings.Replace(base, "minimum: 1", "minimum: 2", 1), []string{"spec.replicas: minimum raised from 1 to 2"}},
		"minimum lowered":     {strings.Replace(base, "minimum: 1", "minimum: 0", 1), nil},
		"maximum lowered":     {strings.Replace(base, "maximum: 10", "maximum: 5", 1), []string{"spec.replicas: maximum lowered from 10 to 5"}},
		"item maxLength":      {strings.Replace(base, "maxLength: 20", "maxLength: 10", 1), []string{"spec.tags[]: maxLength lowered from 20 to 10"}},
		"pattern added":       {strings.Replace(base, "name: {type: string}", "name: {type: string, pattern: '^a'}", 1), []string{`spec.name: pattern "^a" added`}},
		"required removed":    {strings.Replace(base, "[name]", "[]", 1), nil},
	} {
		t.Run(name, func(t *testing.T) {
			got := Breaking(crdWithSpec(t, base), crdWithSpec(t, tc.new))
			if len(got) != len(tc.want) {
				t.Fatalf("got %d changes %v, want %v", len(got), got, tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i].String(), w) {
					t.Errorf("change %d = %q, want %q", i, got[i], w)
				}
			}
		})
	}
}

func TestBreakingVersionAndStatus(t *testing.T) {
	old := crdWithSpec(t, base)
	renamed := crdWithSpec(t, base)
	renamed.Spec.Versions[0].Name = "v1"
	if got := Breaking(old, renamed); len(got) != 1 || got[0].Path != "version" {
		t.Errorf("renamed version: %v", got)
	}
	noStatus := crdWithSpec(t, base)
	noStatus.Spec.Versions[0].Subresources = nil
	if got := Breaking(old, noStatus); len(got) != 1 || got[0].Path != "version.subresources.status" {
		t.Errorf("status removed: %v", got)
	}
}
