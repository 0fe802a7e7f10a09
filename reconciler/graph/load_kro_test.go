package graph

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kroscope/kroscope/test/graphs"
)

// currentKroSchema has every spec.schema field of kro's current RGD CRD.
var currentKroSchema = graphs.RGD("current", "Thing", `group: kro.run
scope: Cluster
shortNames: [th, thg]
categories: [kro, things]
metadata:
  labels: {team: blue}
  annotations: {note: hello}
spec:
  name: string
additionalPrinterColumns:
- {name: Name, type: string, jsonPath: .spec.name}`,
	graphs.Template("config", "v1", "ConfigMap", "name: ${schema.spec.name}\nnamespace: default", ""))

// TestParseCurrentKroSchemaFields reads every field kro's current RGD CRD
// has in spec.schema, from a file and from a cluster object.
func TestParseCurrentKroSchemaFields(t *testing.T) {
	check := func(t *testing.T, rgd *ResourceGraphDefinition) {
		t.Helper()
		s := rgd.Spec.Schema
		if s.Scope != ScopeCluster || strings.Join(s.ShortNames, ",") != "th,thg" || strings.Join(s.Categories, ",") != "kro,things" ||
			s.Metadata.Labels["team"] != "blue" || s.Metadata.Annotations["note"] != "hello" || len(s.AdditionalPrinterColumns) != 1 {
			t.Fatalf("schema = %+v", s)
		}
	}
	t.Run("file", func(t *testing.T) {
		rgds, err := Parse([]byte(currentKroSchema), "current.yaml")
		if err != nil {
			t.Fatal(err)
		}
		check(t, rgds[0])
	})
	t.Run("cluster", func(t *testing.T) {
		obj, err := decodeYAML([]byte(currentKroSchema))
		if err != nil {
			t.Fatal(err)
		}
		rgd, err := FromUnstructured(&unstructured.Unstructured{Object: obj})
		if err != nil {
			t.Fatal(err)
		}
		check(t, rgd)
	})
}

// TestParseSchemaFieldErrors checks the rules kro's CRD enforces on the new
// fields, for files (which never went through that CRD).
func TestParseSchemaFieldErrors(t *testing.T) {
	cases := map[string]struct{ from, to, want string }{
		"scope":               {"scope: Cluster", "scope: Global", `spec.schema.scope: scope "Global" is not Namespaced or Cluster`},
		"scope type":          {"scope: Cluster", "scope: 1", "spec.schema.scope: must be a string, got number"},
		"shortName pattern":   {"shortNames: [th, thg]", "shortNames: [Th]", `spec.schema.shortNames[0]: "Th" is not a lower-case DNS label`},
		"shortName dup":       {"shortNames: [th, thg]", "shortNames: [th, th]", `spec.schema.shortNames[1]: "th" is listed twice`},
		"category too long":   {"categories: [kro, things]", "categories: [" + strings.Repeat("a", 64) + "]", "spec.schema.categories[0]: \"" + strings.Repeat("a", 64) + "\" is longer than 63 characters"},
		"categories too many": {"categories: [kro, things]", "categories: [" + strings.TrimSuffix(strings.Repeat("a,", 33), ",") + "]", "spec.schema.categories: at most 32 entries, got 33"},
		"metadata field":      {"annotations: {note: hello}", "annotations: {note: hello}\n      finalizers: [x]", `spec.schema.metadata.finalizers: unknown field "finalizers" (allowed fields: labels, annotations)`},
		"label value":         {"labels: {team: blue}", "labels: {team: 3}", "spec.schema.metadata.labels.team: must be a string, got number"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			src := strings.Replace(currentKroSchema, c.from, c.to, 1)
			if src == currentKroSchema {
				t.Fatalf("%q not in the fixture", c.from)
			}
			_, err := Parse([]byte(src), "f.yaml")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}

// TestUnknownFieldFromClusterNeedsNewerKroscope: a field kroscope does not
// know is an error for that graph; from a cluster it says kroscope is too
// old, from a file it lists the allowed fields.
func TestUnknownFieldFromClusterNeedsNewerKroscope(t *testing.T) {
	src := strings.Replace(currentKroSchema, "    scope: Cluster\n", "    scope: Cluster\n    futureField: 1\n", 1)
	obj, err := decodeYAML([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	_, err = FromUnstructured(&unstructured.Unstructured{Object: obj})
	if want := "current: spec.schema.futureField: needs a newer kroscope: field spec.schema.futureField"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("cluster: err = %v, want %q", err, want)
	}
	_, err = Parse([]byte(src), "f.yaml")
	if want := `spec.schema.futureField: unknown field "futureField" (allowed fields: apiVersion, kind, group, scope`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("file: err = %v, want %q", err, want)
	}
}
