package graphview

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/kroscope/kroscope/reconciler/graph"
)

var update = flag.Bool("update", false, "rewrite the golden files")

const webapp = `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata:
  name: webapp
spec:
  schema:
    apiVersion: v1alpha1
    kind: WebApp
    spec:
      name: string
      ingress: boolean | default=false
    status:
      replicas: ${deployment.status.availableReplicas}
  resources:
  - id: config
    externalRef:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: shared
        namespace: default
  - id: deployment
    readyWhen:
    - ${deployment.status.availableReplicas > 0}
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata:
        name: ${schema.spec.name}
        annotations:
          config: ${config.data.version}
  - id: service
    template:
      apiVersion: v1
      kind: Service
      metadata:
        name: ${deployment.metadata.name}
  - id: ingress
    includeWhen:
    - ${schema.spec.ingress}
    template:
      apiVersion: networking.k8s.io/v1
      kind: Ingress
      metadata:
        name: ${service.metadata.name}
`

func build(t *testing.T) *graph.Graph {
	t.Helper()
	rgds, err := graph.Parse([]byte(webapp), "webapp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	g, err := graph.NewBuilder().Build(rgds[0])
	if err != nil {
		t.Fatal(err)
	}
	return g
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
