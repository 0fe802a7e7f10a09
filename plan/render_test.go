package plan

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/graph/builtinschemas"
)

const renderGraph = `apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata:
  name: app
spec:
  schema:
    apiVersion: v1alpha1
    kind: RenderApp
    spec:
      replicas: integer | default=2
      password: string
  resources:
  - id: secret
    template:
      apiVersion: v1
      kind: Secret
      metadata:
        name: ${schema.metadata.name}-db
      stringData:
        password: ${schema.spec.password}
  - id: deployment
    readyWhen:
    - ${deployment.status.availableReplicas == deployment.spec.replicas}
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata:
        name: ${schema.metadata.name}
      spec:
        replicas: ${schema.spec.replicas}
        selector:
          matchLabels: {app: web}
        template:
          metadata:
            labels: {app: web}
          spec:
            containers:
            - name: web
              image: nginx
              env:
              - name: SECRET_NAME
                value: ${secret.metadata.name}
  - id: service
    template:
      apiVersion: v1
      kind: Service
      metadata:
        name: ${deployment.metadata.name}
      spec:
        selector: {app: web}
        ports:
        - port: 80
`

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
