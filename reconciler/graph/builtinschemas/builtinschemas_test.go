package builtinschemas_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"

	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/graph/builtinschemas"
	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/graphs"
	"github.com/kroscope/kroscope/test/kroexamples"
	"github.com/kroscope/kroscope/test/prereq"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestEmbeddedDocuments: every minor hack/k8s pins is embedded, at the
// version pinned, and holds the groups graphs use most.
func TestEmbeddedDocuments(t *testing.T) {
	pinned := prereq.PinnedK8sVersions()
	if got, want := len(builtinschemas.Versions()), len(pinned); got != want {
		t.Errorf("embedded minors %v, hack/k8s pins %v: run make builtin-schemas", builtinschemas.Versions(), pinned)
	}
	for minor, version := range pinned {
		s, err := builtinschemas.For(minor)
		if err != nil {
			t.Errorf("%s: %v (run make builtin-schemas)", minor, err)
			continue
		}
		if s.KubernetesVersion() != version {
			t.Errorf("embedded %s schemas are Kubernetes %q, hack/k8s pins %s: run make builtin-schemas", minor, s.KubernetesVersion(), version)
		}
		gvs := s.GroupVersions()
		for _, want := range []string{"api/v1", "apis/apps/v1", "apis/batch/v1", "apis/networking.k8s.io/v1", "apis/rbac.authorization.k8s.io/v1", "apis/policy/v1", "apis/autoscaling/v2"} {
			if !slices.Contains(gvs, want) {
				t.Errorf("%s: no %s in %v", minor, want, gvs)
			}
		}
		r := graph.NewClientSchemaResolver(s.Client(), 0)
		d, err := r.ResolveSchema(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"})
		if err != nil {
			t.Fatal(err)
		}
		replicas := d.Properties["spec"].Properties["replicas"]
		if !replicas.Type.Contains("integer") || len(d.Properties["spec"].Properties["template"].Properties) == 0 {
			t.Errorf("%s: Deployment spec.replicas %v, template %v: refs not inlined", minor, replicas.Type, d.Properties["spec"].Properties["template"])
		}
		if _, err := r.ResolveSchema(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}); err == nil {
			t.Errorf("%s: a CRD's kind resolved without a cluster", minor)
		}
	}
	if got, want := builtinschemas.KubernetesVersion(), prereq.K8sVersion(); os.Getenv(prereq.K8sVersionEnv) == "" && got != want {
		t.Errorf("default schemas are Kubernetes %s, hack/k8s/go.mod pins %s", got, want)
	}
}

// TestFor: a minor is named as 1.35, v1.35 or a full version; one not
// embedded is an error naming it and the embedded ones.
func TestFor(t *testing.T) {
	newest := builtinschemas.Newest()
	for _, in := range []string{newest, "v" + newest, "v" + newest + ".0", " " + newest + " "} {
		s, err := builtinschemas.For(in)
		if err != nil || s.Minor() != newest {
			t.Errorf("For(%q) = %v, %v; want %s", in, s, err, newest)
		}
	}
	for in, want := range map[string]string{
		"1.20":   "Kubernetes 1.20: kroscope embeds the schemas of " + strings.Join(builtinschemas.Versions(), ", ") + " only",
		"latest": `Kubernetes version "latest": want a minor such as ` + newest,
		"2.1":    `Kubernetes version "2.1"`,
		"1.x":    `Kubernetes version "1.x"`,
		"":       `Kubernetes version ""`,
	} {
		if _, err := builtinschemas.For(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("For(%q): got %v, want an error containing %q", in, err, want)
		}
	}
}

// TestEmbeddedMatchesServer: the embedded schemas of the test API server's
// minor are what it serves, GroupVersion by GroupVersion (every one it
// serves by itself is embedded, with the same schemas): the generator reads
// the documents each release publishes in its module, and this proves them
// the server's. make test runs it on the default minor and CI on the
// oldest supported one.
func TestEmbeddedMatchesServer(t *testing.T) {
	env := envtest.Start(t)
	d, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	v, err := d.ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	s, err := builtinschemas.For(v.GitVersion)
	if err != nil {
		t.Fatal(err)
	}
	if s.KubernetesVersion() != v.GitVersion {
		t.Errorf("embedded %s schemas are %s, the server is %s", s.Minor(), s.KubernetesVersion(), v.GitVersion)
	}
	embedded, err := s.Client().Paths()
	if err != nil {
		t.Fatal(err)
	}
	served, err := d.OpenAPIV3().Paths()
	if err != nil {
		t.Fatal(err)
	}
	crdGroups := map[string]bool{}
	crds, err := env.Clients(t).Dynamic().Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range crds.Items {
		group, _, _ := unstructured.NestedString(c.Object, "spec", "group")
		crdGroups[group] = true
	}
	compared := 0
	for p, gv := range served {
		parts := strings.Split(p, "/")
		if !(parts[0] == "api" && len(parts) == 2) && !(parts[0] == "apis" && len(parts) == 3 && !crdGroups[parts[1]]) {
			continue // not a GroupVersion, or a CRD's
		}
		e, ok := embedded[p]
		if !ok {
			t.Errorf("%s: served by %s, not embedded", p, v.GitVersion)
			continue
		}
		raw, err := gv.Schema("application/json")
		if err != nil {
			t.Fatal(err)
		}
		want, err := builtinschemas.SchemasOnly(raw)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := e.Schema("application/json")
		if !jsonEqual(t, want, got) {
			t.Errorf("%s: the embedded schemas differ from the ones %s serves", p, v.GitVersion)
		}
		compared++
	}
	if compared < 20 {
		t.Errorf("compared %d GroupVersions; the server serves more", compared)
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}

var deployment = graphs.RGD("app", "App", "spec:\n  name: string\n  replicas: integer | default=1\nstatus:\n  ready: ${deployment.status.readyReplicas}",
	graphs.Template("deployment", "apps/v1", "Deployment", "name: ${schema.spec.name}", `spec:
  replicas: ${schema.spec.replicas}
  selector:
    matchLabels: {app: "${schema.spec.name}"}
  template:
    metadata:
      labels: {app: "${schema.spec.name}"}
    spec:
      containers:
      - name: app
        image: nginx`),
	graphs.Template("widget", "example.com/v1", "Widget", "name: ${schema.spec.name}", "spec:\n  anything: ${deployment.spec.replicas}"))

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
