package plan

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/graph/builtinschemas"
	"github.com/kroscope/kroscope/test/graphs"
)

var renderGraph = graphs.RGD("app", "RenderApp", "spec:\n  replicas: integer | default=2\n  password: string",
	graphs.Template("secret", "v1", "Secret", "name: ${schema.metadata.name}-db", "stringData:\n  password: ${schema.spec.password}"),
	graphs.Template("deployment", "apps/v1", "Deployment", "name: ${schema.metadata.name}",
		"spec:\n  replicas: ${schema.spec.replicas}\n"+graphs.Indent(graphs.Workload("web", "containers:\n- name: web\n  image: nginx\n  env:\n  - name: SECRET_NAME\n    value: ${secret.metadata.name}"), 2),
		"readyWhen:\n- ${deployment.status.availableReplicas == deployment.spec.replicas}"),
	graphs.Template("service", "v1", "Service", "name: ${deployment.metadata.name}", "spec:\n  selector: {app: web}\n  ports:\n  - port: 80"))

// renderAppGraph is renderGraph built, its templates typed as validate
// types them.
func renderAppGraph(t *testing.T) *graph.Graph {
	t.Helper()
	rgds, err := graph.Parse([]byte(renderGraph), "app.yaml")
	if err != nil {
		t.Fatal(err)
	}
	g, _, err := graph.NewBuilder(graph.WithSchemaResolver(graph.NewClientSchemaResolver(builtinschemas.Client(), 0))).Servable(rgds[0])
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestRender: the reconciler's own children, offline: defaults applied,
// dependents of a ready resource rendered, a resource waiting for a
// status listed as a note, and a Secret's values never printed.
func TestRender(t *testing.T) {
	g := renderAppGraph(t)
	inst := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kro.run/v1alpha1", "kind": "RenderApp",
		"metadata": map[string]any{"name": "shop", "namespace": "team"},
		"spec":     map[string]any{"password": "hunter2-long"},
	}}
	out, err := Render(context.Background(), g, inst)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, u := range out.Objects {
		kinds = append(kinds, u.GetKind()+"/"+u.GetName())
	}
	if got := strings.Join(kinds, " "); got != "Secret/shop-db Deployment/shop" {
		t.Errorf("rendered %s, want the Secret and the Deployment", got)
	}
	b := &strings.Builder{}
	if err := out.WriteYAML(b); err != nil {
		t.Fatal(err)
	}
	y := b.String()
	for _, want := range []string{"replicas: 2", "value: shop-db", "password: " + Sensitive, `# ? resource service (Service): "waiting for deployment`} {
		if !strings.Contains(y, want) {
			t.Errorf("render lacks %q:\n%s", want, y)
		}
	}
	if strings.Contains(y, "hunter2") || strings.Contains(y, "aHVudGVyMi1sb25n") {
		t.Errorf("render prints the Secret's value:\n%s", y)
	}
}
