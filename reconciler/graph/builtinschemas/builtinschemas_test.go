package builtinschemas_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/graph/builtinschemas"
	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/kroexamples"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestEmbeddedDocuments: the embedded documents are the test API server's
// version and hold the groups graphs use most.
func TestEmbeddedDocuments(t *testing.T) {
	if v := builtinschemas.KubernetesVersion(); v != envtest.K8sVersion() {
		t.Errorf("embedded schemas are Kubernetes %q, the tests run %s: run make builtin-schemas", v, envtest.K8sVersion())
	}
	gvs := builtinschemas.GroupVersions()
	for _, want := range []string{"api/v1", "apis/apps/v1", "apis/batch/v1", "apis/networking.k8s.io/v1", "apis/rbac.authorization.k8s.io/v1", "apis/policy/v1", "apis/autoscaling/v2"} {
		if !slices.Contains(gvs, want) {
			t.Errorf("no %s in %v", want, gvs)
		}
	}
	r := graph.NewClientSchemaResolver(builtinschemas.Client(), 0)
	s, err := r.ResolveSchema(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"})
	if err != nil {
		t.Fatal(err)
	}
	replicas := s.Properties["spec"].Properties["replicas"]
	if !replicas.Type.Contains("integer") || len(s.Properties["spec"].Properties["template"].Properties) == 0 {
		t.Errorf("Deployment spec.replicas %v, template %v: refs not inlined", replicas.Type, s.Properties["spec"].Properties["template"])
	}
	if _, err := r.ResolveSchema(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}); err == nil {
		t.Error("a CRD's kind resolved without a cluster")
	}
}

const deployment = `apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata:
  name: app
spec:
  schema:
    apiVersion: v1alpha1
    kind: App
    spec:
      name: string
      replicas: integer | default=1
    status:
      ready: ${deployment.status.readyReplicas}
  resources:
  - id: deployment
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata:
        name: ${schema.spec.name}
      spec:
        replicas: ${schema.spec.replicas}
        selector:
          matchLabels: {app: "${schema.spec.name}"}
        template:
          metadata:
            labels: {app: "${schema.spec.name}"}
          spec:
            containers:
            - name: app
              image: nginx
  - id: widget
    template:
      apiVersion: example.com/v1
      kind: Widget
      metadata:
        name: ${schema.spec.name}
      spec:
        anything: ${deployment.spec.replicas}
`

// TestTypeChecksBuiltinKinds: without a cluster, a built-in kind's
// template is checked against its schema (a field it lacks, an expression
// of the wrong type, a status field it does not have are errors), and a
// CRD's kind stays untyped.
func TestTypeChecksBuiltinKinds(t *testing.T) {
	build := func(src string) error {
		t.Helper()
		rgds, err := graph.Parse([]byte(src), "app.yaml")
		if err != nil {
			t.Fatal(err)
		}
		_, err = graph.NewBuilder(graph.WithSchemaResolver(graph.NewClientSchemaResolver(builtinschemas.Client(), 0))).Build(rgds[0])
		return err
	}
	if err := build(deployment); err != nil {
		t.Fatalf("valid graph: %v", err)
	}
	for name, c := range map[string]struct{ from, to, want string }{
		"string into an integer": {"replicas: ${schema.spec.replicas}", "replicas: ${schema.spec.name}", "spec.replicas"},
		"unknown template field": {"        replicas: ${schema.spec.replicas}\n", "        replicas: ${schema.spec.replicas}\n        replicaz: 2\n", `Deployment has no field "replicaz"`},
		"unknown status field":   {"${deployment.status.readyReplicas}", "${deployment.status.readyReplicaz}", "readyReplicaz"},
	} {
		src := strings.Replace(deployment, c.from, c.to, 1)
		if src == deployment {
			t.Fatalf("%s: %q not in the graph", name, c.from)
		}
		err := build(src)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error naming %q", name, err, c.want)
		}
	}
	// An expression that does not compile is reported once, for its
	// syntax, not again as a string where the field wants an integer.
	err := build(strings.Replace(deployment, "replicas: ${schema.spec.replicas}", "replicas: ${schema.spec.replicas +}", 1))
	if err == nil || !strings.Contains(err.Error(), "Syntax error") || strings.Contains(err.Error(), "expects integer") {
		t.Errorf("syntax error: got %v, want the syntax error alone", err)
	}
}

// TestKroExamplesTypeCheck: every kro example that builds untyped builds
// with the built-in schemas too: the offline check adds no error kro would
// not give on a cluster.
func TestKroExamplesTypeCheck(t *testing.T) {
	files := kroexamples.RGDFiles(t)
	ours, _ := filepath.Glob("../../../examples/*/*.yaml")
	r := graph.NewClientSchemaResolver(builtinschemas.Client(), 0)
	for _, file := range append(files, ours...) {
		rgds, err := graph.LoadFiles(file)
		if err != nil {
			continue
		}
		for _, rgd := range rgds {
			if _, err := graph.NewBuilder().Build(rgd); err != nil {
				continue
			}
			if _, err := graph.NewBuilder(graph.WithSchemaResolver(r)).Build(rgd); err != nil {
				t.Errorf("%s: %v", file, err)
			}
		}
	}
}
