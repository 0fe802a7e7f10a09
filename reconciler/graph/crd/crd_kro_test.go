package crd_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/kroscope/kroscope/reconciler/graph/crd"
)

// TestNewCurrentKroFields: scope, shortNames, categories and
// schema.metadata reach the CRD as kro puts them there, and kroscope's
// ownership labels win over an author's label of the same key.
func TestNewCurrentKroFields(t *testing.T) {
	c, err := crd.New(crd.Input{
		APIVersion: "v1alpha1", Kind: "Tenant", Spec: spec(t, "name: string"), GraphName: "tenant",
		ClusterScoped: true,
		ShortNames:    []string{"tn"},
		Categories:    []string{"kro", "platform"},
		Labels:        map[string]string{"team": "blue", "kro.run/owned": "false"},
		Annotations:   map[string]string{"docs": "https://example.com"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Spec.Scope != apiextensionsv1.ClusterScoped {
		t.Errorf("scope %q", c.Spec.Scope)
	}
	want := apiextensionsv1.CustomResourceDefinitionNames{Kind: "Tenant", ListKind: "TenantList", Plural: "tenants", Singular: "tenant",
		ShortNames: []string{"tn"}, Categories: []string{"kro", "platform"}}
	if d := cmp.Diff(want, c.Spec.Names); d != "" {
		t.Errorf("names (-want +got):\n%s", d)
	}
	wantLabels := map[string]string{
		"team":                                   "blue",
		"app.kubernetes.io/managed-by":           "kroscope",
		"kro.run/owned":                          "true",
		"kro.run/resource-graph-definition-name": "tenant",
	}
	if d := cmp.Diff(wantLabels, c.Labels); d != "" {
		t.Errorf("labels (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]string{"docs": "https://example.com"}, c.Annotations); d != "" {
		t.Errorf("annotations (-want +got):\n%s", d)
	}
}

// TestDefaultPrinterColumnsAsKro: kro's default columns, descriptions
// included; an empty list means the defaults, as in kro.
func TestDefaultPrinterColumnsAsKro(t *testing.T) {
	want := []apiextensionsv1.CustomResourceColumnDefinition{
		{Name: "State", Type: "string", JSONPath: ".status.state", Description: "The state of a ResourceGraphDefinition instance"},
		{Name: "Ready", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].status`, Description: "Whether a ResourceGraphDefinition instance is ready"},
		{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp", Description: "Age of the resource"},
	}
	c, err := crd.New(crd.Input{APIVersion: "v1", Kind: "App", Spec: spec(t, "a: string"), GraphName: "app",
		PrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{}})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, c.Spec.Versions[0].AdditionalPrinterColumns); d != "" {
		t.Errorf("columns (-want +got):\n%s", d)
	}
}

// TestNewRejectsBadNames: the API server's CRD validation (run offline)
// catches a shortName or category it would refuse.
func TestNewRejectsBadNames(t *testing.T) {
	_, err := crd.New(crd.Input{APIVersion: "v1", Kind: "App", Spec: spec(t, "a: string"), GraphName: "app",
		ShortNames: []string{"not valid"}})
	if err == nil {
		t.Fatal("a shortName with a space was accepted")
	}
}

// TestNewAcceptsKroOnlySimpleSchema: the schemas kro produces for inputs
// kroscope once refused are valid CRD schemas for the API server.
func TestNewAcceptsKroOnlySimpleSchema(t *testing.T) {
	s := spec(t, "a: string | minimum=1 maximum=3 required=True\nb: string | default=\ne: string | enum=\"x,y,x\"\nf: integer | validation=\"self > 0\" immutable=true")
	if _, err := crd.New(crd.Input{APIVersion: "v1", Kind: "App", Spec: s, GraphName: "app"}); err != nil {
		t.Fatal(err)
	}
}
