package engine

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kroscope/kroscope/engine/source"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/test/graphs"
)

var secretRGD = graphs.RGD("creds", "Creds", "scope: Cluster",
	graphs.Template("secret", "v1", "Secret", "name: literal\nnamespace: default", "stringData:\n  password: hunter2\ndata:\n  token: aHVudGVyMg=="))

// TestDefinitionMasksSecrets: the definition's YAML never carries a
// template's literal Secret values, says its scope, and leaves out a
// cluster object's status.
func TestDefinitionMasksSecrets(t *testing.T) {
	rgds, err := graph.Parse([]byte(secretRGD), "creds.yaml")
	if err != nil {
		t.Fatal(err)
	}
	file := definitionOf(source.Update{Name: "creds", RGD: rgds[0]})
	u := &unstructured.Unstructured{Object: rgds[0].Object}
	u = u.DeepCopy()
	u.SetUID("u-1")
	u.Object["status"] = map[string]any{"state": "Inactive"}
	cluster := definitionOf(source.Update{Name: "creds", RGD: rgds[0], Object: u})
	for name, d := range map[string]string{"file": file.YAML, "cluster": cluster.YAML} {
		if strings.Contains(d, "hunter2") || strings.Contains(d, "aHVudGVyMg==") || !strings.Contains(d, "password: '********'") {
			t.Errorf("%s: the Secret's values are not masked:\n%s", name, d)
		}
	}
	if file.Scope != "Cluster" || cluster.Scope != "Cluster" || cluster.UID != "u-1" || file.UID != "" {
		t.Errorf("scope or UID: file %+v, cluster %+v", file, cluster)
	}
	if strings.Contains(cluster.YAML, "Inactive") {
		t.Errorf("the cluster object's status is shown:\n%s", cluster.YAML)
	}
	if definitionOf(source.Update{Name: "x"}) != nil {
		t.Error("an update with nothing read has a definition")
	}
}
