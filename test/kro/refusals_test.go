package kro

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kroscope/kroscope/reconciler/graph"
)

// TestKroRefusesWhatValidateRefuses: graphs kroscope refuses because kro
// v0.9.4 refuses them are refused by the real kro too, with the same words.
func TestKroRefusesWhatValidateRefuses(t *testing.T) {
	cases := map[string]string{
		"status-no-reference": "instance status field must refer to a resource or schema",
		"spec-undeclared":     "undefined field 'nope'",
	}
	r := newKroRig(t)
	var names []string
	for file, want := range cases {
		path := filepath.Join("..", "..", "reconciler", "graph", "testdata", "invalid", file+".yaml")
		rgds, err := graph.LoadFiles(path)
		if err != nil || len(rgds) != 1 {
			t.Fatalf("%s: %v (%d graphs)", path, err, len(rgds))
		}
		if _, err := graph.NewBuilder().Build(rgds[0]); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("kroscope: %s: %v, want an error containing %q", file, err, want)
		}
		names = append(names, r.storeGraph(path).GetName())
	}
	r.waitGraphs(names, cases)
}
