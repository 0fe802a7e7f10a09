package graphview

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/test/graphs"
	"github.com/kroscope/kroscope/test/graphtest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var webapp = graphs.RGD("webapp", "WebApp", `spec:
  name: string
  ingress: boolean | default=false
status:
  replicas: ${deployment.status.availableReplicas}`,
	graphs.Resource("config", "externalRef:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: shared\n    namespace: default"),
	graphs.Template("deployment", "apps/v1", "Deployment", "name: ${schema.spec.name}\nannotations:\n  config: ${config.data.version}", "",
		"readyWhen:\n- ${deployment.status.availableReplicas > 0}"),
	graphs.Template("service", "v1", "Service", "name: ${deployment.metadata.name}", ""),
	graphs.Template("ingress", "networking.k8s.io/v1", "Ingress", "name: ${service.metadata.name}", "", "includeWhen:\n- ${schema.spec.ingress}"))

func build(t *testing.T) *graph.Graph {
	t.Helper()
	return graphtest.Build(t, webapp, "webapp.yaml")
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestText(t *testing.T) {
	var b bytes.Buffer
	if err := Text(&b, build(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "webapp.txt", b.Bytes())
}

func TestDot(t *testing.T) {
	var b bytes.Buffer
	if err := Dot(&b, build(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "webapp.dot", b.Bytes())
}

func TestJSON(t *testing.T) {
	var b bytes.Buffer
	if err := JSON(&b, []*graph.Graph{build(t)}); err != nil {
		t.Fatal(err)
	}
	golden(t, "webapp.json", b.Bytes())
	var out []Summary
	if err := json.Unmarshal(b.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || len(out[0].Layers) != 4 || out[0].Resources[3].ID != "ingress" {
		t.Fatalf("unexpected summary: %+v", out)
	}
}
