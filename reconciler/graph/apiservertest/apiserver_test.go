package apiservertest

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/graphs"
	"github.com/kroscope/kroscope/test/kroexamples"
)

func TestMain(m *testing.M) {
	// controller-runtime's envtest logs through a logger nobody set.
	ctrllog.SetLogger(logr.Discard())
	os.Exit(envtest.Run(m))
}

// TestExampleCRDsOnAPIServer installs the CRD built for every kro example
// (spec from SimpleSchema, status inferred from the status expressions) in
// a real API server, creates the example's instance, and writes the status
// RenderStatus produces from observed children: the API server must keep
// every projected field with the type inferred for it.
func TestExampleCRDsOnAPIServer(t *testing.T) {
	files := kroexamples.RGDFiles(t)
	env := envtest.Start(t)
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// Observed children with the fields the examples' status reads.
	observed := graph.Vars{
		"deployment": map[string]any{
			"metadata": map[string]any{"name": "web"},
			"status": map[string]any{
				"availableReplicas": int64(2),
				"conditions":        []any{map[string]any{"type": "Available", "status": "True"}},
			},
		},
		"ingress": map[string]any{"status": map[string]any{"loadBalancer": map[string]any{
			"ingress": []any{map[string]any{"hostname": "web.example.com"}},
		}}},
		"service": map[string]any{"metadata": map[string]any{"name": "web"}},
	}
	for _, file := range files {
		dir := filepath.Dir(file)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			rgds, err := graph.LoadFiles(file)
			if err != nil {
				t.Fatal(err)
			}
			g, err := graph.NewBuilder().Build(rgds[0])
			if err != nil {
				t.Fatal(err)
			}
			if g.Instance.CRD == nil {
				t.Fatal("no CRD built")
			}
			env.InstallCRDs(t, g.Instance.CRD)
			instFile := filepath.Join(dir, "instance.yaml")
			if _, err := os.Stat(instFile); err != nil {
				instFile = filepath.Join(dir, "valid-instance.yaml")
			}
			data, err := os.ReadFile(instFile)
			if err != nil {
				t.Skipf("no instance for %s", dir)
			}
			obj, err := decodeYAML(data)
			if err != nil {
				t.Fatal(err)
			}
			// A namespace each: two examples (cel-functions, defaults)
			// share a kind and an instance name.
			ns := env.Namespace(t)
			inst := &unstructured.Unstructured{Object: obj}
			inst.SetNamespace(ns)
			res := dyn.Resource(g.Instance.GVR).Namespace(ns)
			created, err := res.Create(ctx, inst, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("creating %s: %v", instFile, err)
			}
			vars := graph.Vars{"schema": map[string]any{
				"apiVersion": created.GetAPIVersion(), "kind": created.GetKind(),
				"metadata": created.Object["metadata"], "spec": created.Object["spec"],
			}}
			for k, v := range observed {
				vars[k] = v
			}
			status, err := g.RenderStatus(vars)
			if err != nil {
				t.Fatalf("RenderStatus: %v", err)
			}
			if len(g.Status) > 0 && len(status) == 0 {
				t.Fatalf("no status field resolved")
			}
			status["state"] = "ACTIVE"
			created.Object["status"] = status
			updated, err := res.UpdateStatus(ctx, created, metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("writing status %v: %v", status, err)
			}
			if got := updated.Object["status"]; !reflect.DeepEqual(got, any(status)) {
				t.Errorf("API server kept status %v, wrote %v", got, status)
			}
		})
	}
}

// TestSchemaResolverFromAPIServer types resources from the API server's
// OpenAPI: a misspelt field of a core kind is a build error, status types
// come from the kind's schema, and rendering still works on plain objects.
func TestSchemaResolverFromAPIServer(t *testing.T) {
	env := envtest.Start(t)
	disc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	b := graph.NewBuilder(graph.WithSchemaResolver(graph.NewDiscoverySchemaResolver(disc)))
	for _, file := range kroexamples.RGDFiles(t) {
		rgds, err := graph.LoadFiles(file)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.Build(rgds[0]); err != nil {
			t.Errorf("%s with OpenAPI types:\n%v", file, err)
		}
	}

	src := strings.Replace(evalRGD, "${schema.spec.replicas > 1}", "${deployment.spec.replicaz > 1}", 1)
	rgds, err := graph.Parse([]byte(src), "typed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Build(rgds[0])
	if err == nil || !strings.Contains(err.Error(), "undefined field 'replicaz'") {
		t.Fatalf("err = %v, want undefined field 'replicaz'", err)
	}

	rgds, err = graph.Parse([]byte(evalRGD), "typed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	g, err := b.Build(rgds[0])
	if err != nil {
		t.Fatal(err)
	}
	st := g.Instance.CRD.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"].Properties["ready"]
	if st.Type != "integer" {
		t.Errorf("status.ready (deployment.status.availableReplicas) typed %+v, want integer", st)
	}
	dep := map[string]any{
		"metadata": map[string]any{"name": "web", "creationTimestamp": "2026-01-01T00:00:00Z"},
		"spec":     map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}}},
	}
	u, err := g.Resources["service"].Render(graph.Vars{"schema": instance(), "deployment": dep})
	if err != nil {
		t.Fatal(err)
	}
	if u.GetName() != "web-svc" {
		t.Errorf("name = %q", u.GetName())
	}
}

func decodeYAML(data []byte) (map[string]any, error) {
	var obj map[string]any
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, err
	}
	return obj, utiljson.Unmarshal(js, &obj)
}

var evalRGD = graphs.RGD("typed", "Typed", "spec:\n  name: string\n  replicas: integer | default=3\nstatus:\n  ready: ${deployment.status.availableReplicas}",
	graphs.Template("deployment", "apps/v1", "Deployment", "name: ${schema.spec.name}", "spec:\n  replicas: ${schema.spec.replicas}"),
	graphs.Template("service", "v1", "Service", "name: ${deployment.metadata.name}-svc", "spec:\n  selector: ${deployment.spec.selector.matchLabels}",
		"includeWhen:\n- ${schema.spec.replicas > 1}"))

func instance() map[string]any {
	return map[string]any{
		"apiVersion": "kro.run/v1alpha1", "kind": "Typed",
		"metadata": map[string]any{"name": "demo", "namespace": "ns"},
		"spec":     map[string]any{"name": "web", "replicas": int64(3)},
	}
}

// TestTemplatesCheckedAgainstOpenAPI writes wrong fields and types into a
// Deployment template: with the API server's schemas each is a build
// error naming the field.
func TestTemplatesCheckedAgainstOpenAPI(t *testing.T) {
	env := envtest.Start(t)
	disc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	b := graph.NewBuilder(graph.WithSchemaResolver(graph.NewDiscoverySchemaResolver(disc)))
	tests := map[string]string{
		"        replicas: ${schema.spec.replicas}\n        replcas: 2\n": `spec.resources[0].template.spec.replcas: Deployment has no field "replcas"`,
		"        replicas: ${schema.spec.name}\n":                         "spec.replicas expects integer, but ${schema.spec.name} returns string",
		"        replicas: n-${schema.spec.name}\n":                       "spec.replicas expects integer, but a string template always gives a string",
		"        replicas: \"3\"\n":                                       "spec.replicas expects integer, got string 3",
		"        replicas: ${schema.spec.replicas}\n        paused: ${schema.spec.replicas > 1}\n        minReadySeconds: ${schema.spec.replicas}\n": "",
	}
	for spec, want := range tests {
		src := strings.Replace(evalRGD, "        replicas: ${schema.spec.replicas}\n", spec, 1)
		rgds, err := graph.Parse([]byte(src), "typed.yaml")
		if err != nil {
			t.Fatal(err)
		}
		_, err = b.Build(rgds[0])
		switch {
		case want == "" && err != nil:
			t.Errorf("valid template rejected:\n%v", err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("err = %v, want %q", err, want)
		}
	}
}
