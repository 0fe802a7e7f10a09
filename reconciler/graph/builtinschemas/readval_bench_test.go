package builtinschemas_test

import (
	"testing"

	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/graph/builtinschemas"
)

// BenchmarkReadTypedDeployment evaluates a field of an observed Deployment
// read through its schema (whose Quantity fields are read natively).
func BenchmarkReadTypedDeployment(b *testing.B) {
	rgds, err := graph.Parse([]byte(deployment), "app.yaml")
	if err != nil {
		b.Fatal(err)
	}
	g, err := graph.NewBuilder(graph.WithSchemaResolver(graph.NewClientSchemaResolver(builtinschemas.Client(), 0))).Build(rgds[0])
	if err != nil {
		b.Fatal(err)
	}
	container := func(n string) map[string]any {
		return map[string]any{"name": n, "image": "nginx", "ports": []any{map[string]any{"containerPort": int64(80)}},
			"resources": map[string]any{"limits": map[string]any{"cpu": "500m", "memory": "128Mi"}, "requests": map[string]any{"cpu": "100m"}},
			"env":       []any{map[string]any{"name": "A", "value": "b"}}}
	}
	vars := graph.Vars{
		"schema": map[string]any{"metadata": map[string]any{"name": "x", "namespace": "ns"}, "spec": map[string]any{"name": "x", "replicas": int64(2)}},
		"deployment": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "x", "namespace": "ns", "labels": map[string]any{"app": "x"}},
			"spec": map[string]any{"replicas": int64(2), "selector": map[string]any{"matchLabels": map[string]any{"app": "x"}},
				"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "x"}},
					"spec": map[string]any{"containers": []any{container("a"), container("b")}}}},
			"status": map[string]any{"readyReplicas": int64(2)}},
	}
	r := g.Resources["widget"]
	for b.Loop() {
		if _, err := r.Render(vars); err != nil {
			b.Fatal(err)
		}
	}
}
