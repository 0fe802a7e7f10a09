package crd_test

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kroscope/kroscope/reconciler/graph/crd"
	"github.com/kroscope/kroscope/reconciler/graph/crd/crdtest"
	"github.com/kroscope/kroscope/reconciler/graph/simpleschema"
	"github.com/kroscope/kroscope/test/prereq"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestPlural holds kro's plurals (flect.Pluralize of the lower-cased kind)
// for regular and irregular kinds; kroscope's earlier rules got the
// irregular ones wrong (persons, quizes, indexes, ys).
func TestPlural(t *testing.T) {
	for kind, want := range map[string]string{
		"WebApp":                              "webapps",
		"ValidationTestApp":                   "validationtestapps",
		"Policy":                              "policies",
		"Gateway":                             "gateways",
		"Status":                              "statuses",
		"Box":                                 "boxes",
		"Quiz":                                "quizzes",
		"Patch":                               "patches",
		"Mesh":                                "meshes",
		"Key":                                 "keys",
		"Y":                                   "ies",
		"Application":                         "applications",
		"JobDeployment":                       "jobdeployments",
		"DatabaseProxy":                       "databaseproxies",
		"CheckInstanceUpdateSimpleDeployment": "checkinstanceupdatesimpledeployments",
		"Person":                              "people",
		"Index":                               "indices",
		"Child":                               "children",
		"Mouse":                               "mice",
		"Data":                                "data",
		"Matrix":                              "matrices",
		"Analysis":                            "analyses",
		"Cactus":                              "cacti",
		"Criterion":                           "criteria",
		"Series":                              "series",
		"Leaf":                                "leaves",
		"Endpoints":                           "endpoints",
		"":                                    "",
	} {
		if got := crd.Plural(kind); got != want {
			t.Errorf("Plural(%q) = %q, want %q", kind, got, want)
		}
	}
}

func spec(t *testing.T, yamlSpec string) *apiextensionsv1.JSONSchemaProps {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(yamlSpec), &m); err != nil {
		t.Fatal(err)
	}
	s, err := simpleschema.ToOpenAPI(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNew(t *testing.T) {
	c, err := crd.New(crd.Input{
		APIVersion: "v1alpha1",
		Kind:       "WebApp",
		Spec:       spec(t, "name: string | required=true\nreplicas: integer | default=1"),
		Status: &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"url":   {Type: "string"},
			"ready": {Type: "boolean"},
		}},
		Validation: []crd.ValidationRule{{Expression: "self.replicas <= 5", Message: "at most 5 replicas"}},
		GraphName:  "webapp",
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "webapps.kro.run" || c.Spec.Group != "kro.run" || c.Spec.Scope != apiextensionsv1.NamespaceScoped {
		t.Errorf("name %q group %q scope %q", c.Name, c.Spec.Group, c.Spec.Scope)
	}
	wantNames := apiextensionsv1.CustomResourceDefinitionNames{Kind: "WebApp", ListKind: "WebAppList", Plural: "webapps", Singular: "webapp"}
	if d := cmp.Diff(wantNames, c.Spec.Names); d != "" {
		t.Errorf("names (-want +got):\n%s", d)
	}
	wantLabels := map[string]string{
		"app.kubernetes.io/managed-by":           "kroscope",
		"kro.run/owned":                          "true",
		"kro.run/resource-graph-definition-name": "webapp",
	}
	if d := cmp.Diff(wantLabels, c.Labels); d != "" {
		t.Errorf("labels (-want +got):\n%s", d)
	}
	if len(c.Spec.Versions) != 1 {
		t.Fatalf("%d versions", len(c.Spec.Versions))
	}
	v := c.Spec.Versions[0]
	if v.Name != "v1alpha1" || !v.Served || !v.Storage || v.Subresources == nil || v.Subresources.Status == nil {
		t.Errorf("version %+v", v)
	}
	var cols []string
	for _, col := range v.AdditionalPrinterColumns {
		cols = append(cols, col.Name+"="+col.JSONPath)
	}
	wantCols := []string{"State=.status.state", `Ready=.status.conditions[?(@.type=="Ready")].status`, "Age=.metadata.creationTimestamp"}
	if d := cmp.Diff(wantCols, cols); d != "" {
		t.Errorf("columns (-want +got):\n%s", d)
	}
	root := v.Schema.OpenAPIV3Schema
	status := root.Properties["status"]
	for _, f := range []string{"url", "ready", "state", "conditions"} {
		if _, ok := status.Properties[f]; !ok {
			t.Errorf("status has no %s", f)
		}
	}
	cond := status.Properties["conditions"].Items.Schema
	for _, f := range []string{"type", "status", "reason", "message", "lastTransitionTime", "observedGeneration"} {
		if _, ok := cond.Properties[f]; !ok {
			t.Errorf("conditions items have no %s", f)
		}
	}
	if got := cond.Properties["observedGeneration"].Type; got != "integer" {
		t.Errorf("observedGeneration type %q", got)
	}
	s := root.Properties["spec"]
	if len(s.XValidations) != 1 || s.XValidations[0].Rule != "self.replicas <= 5" || s.XValidations[0].Message != "at most 5 replicas" {
		t.Errorf("spec validations %+v", s.XValidations)
	}
	if d := cmp.Diff([]string{"name"}, s.Required); d != "" {
		t.Errorf("spec required (-want +got):\n%s", d)
	}
	if len(root.Required) != 0 {
		t.Errorf("root required %v: kro's instance CRD requires nothing at the root, not even spec", root.Required)
	}
}

func TestNewCustomGroupAndColumns(t *testing.T) {
	cols := []apiextensionsv1.CustomResourceColumnDefinition{{Name: "Image", Type: "string", JSONPath: ".spec.image"}}
	c, err := crd.New(crd.Input{Group: "apps.example.com", APIVersion: "v2beta1", Kind: "Policy",
		Spec: spec(t, "image: string"), PrinterColumns: cols, GraphName: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "policies.apps.example.com" {
		t.Errorf("name %q", c.Name)
	}
	if d := cmp.Diff(cols, c.Spec.Versions[0].AdditionalPrinterColumns); d != "" {
		t.Errorf("columns (-want +got):\n%s", d)
	}
	if r := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Required; len(r) != 0 {
		t.Errorf("spec without required fields must stay optional, got required %v", r)
	}
}

func TestNewErrors(t *testing.T) {
	good := func() crd.Input {
		return crd.Input{APIVersion: "v1alpha1", Kind: "App", Spec: spec(t, "a: string"), GraphName: "app"}
	}
	tests := []struct {
		name   string
		modify func(*crd.Input)
		want   []string
	}{
		{"lower-case kind", func(in *crd.Input) { in.Kind = "app" }, []string{`schema.kind "app": must be UpperCamelCase`}},
		{"kind with a dash", func(in *crd.Input) { in.Kind = "My-App" }, []string{`schema.kind "My-App"`}},
		{"apiVersion with group", func(in *crd.Input) { in.APIVersion = "kro.run/v1" }, []string{`schema.apiVersion "kro.run/v1": must look like v1`}},
		{"group without dot", func(in *crd.Input) { in.Group = "local" }, []string{`schema.group "local": must be a DNS domain with at least one dot`}},
		{"graph name not a label value", func(in *crd.Input) { in.GraphName = strings.Repeat("x", 64) }, []string{`graph name "xxxx`, `must be a valid label value`}},
		{"missing graph name", func(in *crd.Input) { in.GraphName = "" }, []string{`graph name "": must be a valid label value`}},
		{"status defines state", func(in *crd.Input) {
			in.Status = &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"state": {Type: "integer"}}}
		}, []string{`status.state: reserved for the instance state kroscope writes`}},
		{"status defines conditions", func(in *crd.Input) {
			in.Status = &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"conditions": {Type: "string"}}}
		}, []string{`status.conditions: reserved`}},
		{"status field without type", func(in *crd.Input) {
			in.Status = &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"url": {}}}
		}, []string{`status.url.type: Required value: must not be empty for specified object fields`}},
		{"bad CEL in a validation marker", func(in *crd.Input) { in.Spec = spec(t, `a: integer | validation="self >"`) },
			[]string{`spec.a.x-kubernetes-validations[0].rule: Invalid value`, `compilation failed`}},
		{"CEL validation of a missing field", func(in *crd.Input) {
			in.Validation = []crd.ValidationRule{{Expression: "self.nope > 1"}}
		}, []string{`spec.x-kubernetes-validations[0].rule`, `undefined field 'nope'`}},
		{"empty validation", func(in *crd.Input) { in.Validation = []crd.ValidationRule{{Expression: " "}} }, []string{`schema.validation[0]: empty expression`}},
		{"pattern that does not compile", func(in *crd.Input) {
			in.Spec = &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"a": {Type: "string", Pattern: "(a"}}}
		},
			[]string{`spec.a.pattern: Invalid value: "(a": must be a valid regular expression`}},
		{"rule over the cost budget", func(in *crd.Input) {
			in.Spec = spec(t, "items: \"[]string\"")
			in.Validation = []crd.ValidationRule{{Expression: "self.items.all(x, self.items.all(y, self.items.all(z, x + y + z != '')))"}}
		}, []string{`spec.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget`}},
		{"printer column format", func(in *crd.Input) {
			in.PrinterColumns = []apiextensionsv1.CustomResourceColumnDefinition{{Name: "X", Type: "string", Format: "colour", JSONPath: ".spec.a"}}
		}, []string{`additionalPrinterColumns[0].format: Invalid value: "colour": must be one of`}},
		{"bad printer column", func(in *crd.Input) {
			in.PrinterColumns = []apiextensionsv1.CustomResourceColumnDefinition{{Name: "X", Type: "colour", JSONPath: ".spec.a"}}
		}, []string{`additionalPrinterColumns[0].type: Invalid value: "colour": must be one of`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := good()
			tt.modify(&in)
			c, err := crd.New(in)
			if err == nil {
				t.Fatalf("want an error, got CRD %s", c.Name)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n  %v\ndoes not contain\n  %s", err, w)
				}
			}
		})
	}
}

// TestOwnership is the one decision whether a CRD in the cluster may be
// overwritten (the engine asks it before applying), read typed or
// unstructured.
func TestOwnership(t *testing.T) {
	kroscope := []metav1.ManagedFieldsEntry{{Manager: "kroscope"}}
	helm := []metav1.ManagedFieldsEntry{{Manager: "helm"}, {Manager: "kubectl"}}
	tests := []struct {
		name     string
		labels   map[string]string
		managers []metav1.ManagedFieldsEntry
		owned    bool
		wantErr  string
	}{
		{"kroscope, same graph", crd.Labels("g"), nil, true, ""},
		{"kroscope, other graph", crd.Labels("other"), nil, true, `CRD apps.kro.run belongs to graph "other", not "g"`},
		{"kro", map[string]string{"kro.run/owned": "true", "kro.run/resource-graph-definition-name": "g"}, nil, true, ""},
		{"kro, other graph", map[string]string{"kro.run/owned": "true", "kro.run/resource-graph-definition-name": "webapp-a"}, nil, true, `belongs to graph "webapp-a"`},
		{"kro, no graph named", map[string]string{"kro.run/owned": "true"}, helm, true, ""},
		{"kro managed-by only", map[string]string{"app.kubernetes.io/managed-by": "kro"}, nil, true, ""},
		{"kroscope managed-by only", map[string]string{"app.kubernetes.io/managed-by": "kroscope"}, nil, true, ""},
		{"kroscope field manager, labels removed", nil, kroscope, true, ""},
		{"foreign label", map[string]string{"app.kubernetes.io/managed-by": "helm"}, nil, false, "(no kro labels)"},
		{"foreign managers", nil, helm, false, "was not created by kroscope or kro (managed by helm, kubectl)"},
		{"owned label not true", map[string]string{"kro.run/owned": "false"}, nil, false, "pass --force-crd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			typed := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "apps.kro.run", Labels: tt.labels, ManagedFields: tt.managers}}
			u := &unstructured.Unstructured{Object: map[string]any{}}
			u.SetName("apps.kro.run")
			u.SetLabels(tt.labels)
			u.SetManagedFields(tt.managers)
			for _, c := range []metav1.Object{typed, u} {
				if _, got := crd.Owner(c); got != tt.owned {
					t.Errorf("%T: Owner ours = %v, want %v", c, got, tt.owned)
				}
				err := crd.CheckOwnership(c, "g")
				var foreign *crd.ForeignError
				switch {
				case tt.wantErr == "" && err != nil:
					t.Errorf("%T: CheckOwnership: %v", c, err)
				case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
					t.Errorf("%T: CheckOwnership = %v, want an error containing %q", c, err, tt.wantErr)
				case err != nil && errors.As(err, &foreign) == tt.owned:
					t.Errorf("%T: CheckOwnership = %v: a ForeignError is for a CRD that is not ours, and only for it", c, err)
				}
			}
		})
	}
}

func examples(t *testing.T) []crdtest.Example {
	t.Helper()
	return crdtest.KroExamples(t)
}

// TestGoldenExamples generates the CRD of the graphs in testdata/rgd/*/ and
// compares it with testdata/<name>.yaml, and of every kro example with
// testdata/kro/<name>.yaml (go test -update rewrites them).
func TestGoldenExamples(t *testing.T) {
	local, err := crdtest.Examples(filepath.Join("testdata", "rgd"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range local {
		t.Run(e.Name, func(t *testing.T) { checkGolden(t, e, filepath.Join("testdata", e.Name+".yaml")) })
	}
	// kro's examples' goldens are kept for the pinned kro version; another
	// version's examples differ (make test KRO_VERSION=...).
	if v := prereq.KroVersion(); v != prereq.PinnedKroVersion() {
		t.Logf("kro %s: its examples' CRDs are not compared with the goldens of kro %s", v, prereq.PinnedKroVersion())
		return
	}
	for _, e := range examples(t) {
		t.Run("kro/"+e.Name, func(t *testing.T) { checkGolden(t, e, filepath.Join("testdata", "kro", e.Name+".yaml")) })
	}
}

func checkGolden(t *testing.T, e crdtest.Example, golden string) {
	t.Helper()
	c, err := crdtest.CRDFromFile(e.Path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := crdtest.MarshalYAML(c)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s differs (-golden +got):\n%s", golden, d)
	}
}

// TestMatchesKroAssertions checks that what kro asserts about its instance
// CRDs (instancecrd-assert.yaml) holds for kroscope's: names, scope,
// version, and every schema keyword kro shows. The printer columns differ
// on purpose (kroscope shows Ready, kro's older release Synced).
func TestMatchesKroAssertions(t *testing.T) {
	checked := 0
	for _, e := range examples(t) {
		assertFile := filepath.Join(e.Dir, "instancecrd-assert.yaml")
		data, err := os.ReadFile(assertFile)
		if os.IsNotExist(err) {
			continue
		}
		checked++
		t.Run(e.Name, func(t *testing.T) {
			if err != nil {
				t.Fatal(err)
			}
			var kro map[string]any
			if err := yaml.Unmarshal(data, &kro); err != nil {
				t.Fatal(err)
			}
			c, err := crdtest.CRDFromFile(e.Path)
			if err != nil {
				t.Fatal(err)
			}
			ours := toMap(t, c)
			kroSpec := kro["spec"].(map[string]any)
			ourSpec := ours["spec"].(map[string]any)
			for _, k := range []string{"group", "names", "scope"} {
				if d := cmp.Diff(kroSpec[k], ourSpec[k]); d != "" {
					t.Errorf("spec.%s (-kro +kroscope):\n%s", k, d)
				}
			}
			if kroName, ourName := kro["metadata"].(map[string]any)["name"], c.Name; kroName != ourName {
				t.Errorf("name %v, kro %v", ourName, kroName)
			}
			kroVersion := kroSpec["versions"].([]any)[0].(map[string]any)
			ourVersion := ourSpec["versions"].([]any)[0].(map[string]any)
			delete(kroVersion, "additionalPrinterColumns")
			if err := subset("versions[0]", kroVersion, ourVersion); err != nil {
				t.Error(err)
			}
		})
	}
	if checked == 0 {
		t.Skip("no example has an instancecrd-assert.yaml")
	}
}

func toMap(t *testing.T, v any) map[string]any {
	t.Helper()
	j, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// subset reports where want has something got does not (maps by key, lists
// element-wise, scalars by value).
func subset(path string, want, got any) error {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: kro has an object, kroscope %v", path, got)
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				return fmt.Errorf("%s.%s: missing (kro has %v)", path, k, wv)
			}
			if err := subset(path+"."+k, wv, gv); err != nil {
				return err
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Errorf("%s: kro has %v, kroscope %v", path, want, got)
		}
		for i := range w {
			if err := subset(fmt.Sprintf("%s[%d]", path, i), w[i], g[i]); err != nil {
				return err
			}
		}
	default:
		if fmt.Sprint(want) != fmt.Sprint(got) {
			return fmt.Errorf("%s: kro has %v, kroscope %v", path, want, got)
		}
	}
	return nil
}

// BenchmarkNew measures SimpleSchema conversion plus CRD generation and
// its offline validation, for a spec the size of kro's webapp example.
func BenchmarkNew(b *testing.B) {
	var m map[string]any
	if err := yaml.Unmarshal([]byte(`
name: string | required=true
namespace: string | default=default
image: string | default=nginx pattern="^[a-z0-9./:-]+$"
port: integer | default=8080 minimum=1 maximum=65535
replicas: integer | default=1 validation="self >= 0"
tags: "[]string | uniqueItems=true maxItems=10"
service:
  enabled: boolean | default=true
ingress:
  enabled: boolean | default=false
  host: string | immutable=true
`), &m); err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, graphName func(i int) string) {
		i := 0
		for b.Loop() {
			s, err := simpleschema.ToOpenAPI(m, nil)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := crd.New(crd.Input{APIVersion: "v1alpha1", Kind: "WebApp", Spec: s, GraphName: graphName(i)}); err != nil {
				b.Fatal(err)
			}
			i++
		}
	}
	// The same graph again: offline validation is remembered.
	b.Run("cached", func(b *testing.B) { run(b, func(int) string { return "webapp" }) })
	// A new CRD every time: the API server's validation compiles the
	// three CEL rules each time.
	b.Run("cold", func(b *testing.B) { run(b, func(i int) string { return fmt.Sprintf("webapp-%d", i) }) })
}
