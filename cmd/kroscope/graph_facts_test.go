package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kroscope/kroscope/test/graphs"
)

// clusterGraph is a graph whose instance kind is cluster-scoped, with a
// forEach collection, an includeWhen and a schema with defaults and markers.
var clusterGraph = graphs.RGD("tenants", "Tenant", `scope: Cluster
spec:
  name: string | required=true
  replicas: integer | default=2 minimum=1 maximum=20
  regions: '[]string | default=["eu"]'
  tier: string | enum="free,pro" default="free"
status:
  namespace: ${ns.metadata.name}`,
	graphs.Template("ns", "v1", "Namespace", "name: ${schema.spec.name}", ""),
	graphs.Template("quotas", "v1", "ConfigMap", "name: ${schema.spec.name + \"-\" + region}\nnamespace: ${ns.metadata.name}", "",
		"forEach:\n- region: ${schema.spec.regions}"),
	graphs.Template("pro", "v1", "ConfigMap", "name: pro\nnamespace: ${ns.metadata.name}", "",
		"includeWhen:\n- ${schema.spec.tier == \"pro\"}"))

// TestGraphJSONSaysClusterScope: `kroscope graph -o json` says a graph's
// instance kind is cluster-scoped, and carries the schema summary and the
// forEach and includeWhen marks; the text form says the same.
func TestGraphJSONSaysClusterScope(t *testing.T) {
	path := t.TempDir() + "/tenants.yaml"
	writeFile(t, path, clusterGraph)
	out, stderr, err := runCmd(t, "graph", "-o", "json", path)
	if err != nil {
		t.Fatalf("graph -o json: %v\n%s", err, stderr)
	}
	var got []map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got) != 1 {
		t.Fatalf("JSON: %v\n%s", err, out)
	}
	if got[0]["scope"] != "Cluster" {
		t.Errorf("scope = %v, want Cluster:\n%s", got[0]["scope"], out)
	}
	for _, want := range []string{`"forEach"`, `"region"`, `"includeWhen"`, `"default": "2"`, `"required": true`,
		`"expression": "${ns.metadata.name}"`, `"maximum=20"`} {
		if !strings.Contains(out, want) {
			t.Errorf("JSON lacks %s:\n%s", want, out)
		}
	}
	out, _, err = runCmd(t, "graph", "-o", "text", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"scope:  Cluster", "forEach region ${schema.spec.regions}", "replicas", "default 2", "namespace  string  ${ns.metadata.name}"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
}
