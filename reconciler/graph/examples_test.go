package graph

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kroscope/kroscope/test/kroexamples"
)

// kroOrder reads topologicalOrder from a chainsaw rgd-assert.yaml.
func kroOrder(t *testing.T, dir string) []string {
	data, err := os.ReadFile(filepath.Join(dir, "rgd-assert.yaml"))
	if err != nil {
		return nil
	}
	obj, err := decodeYAML(data)
	if err != nil {
		t.Fatalf("%s/rgd-assert.yaml: %v", dir, err)
	}
	status, _ := obj["status"].(map[string]any)
	list, _ := status["topologicalOrder"].([]any)
	var out []string
	for _, e := range list {
		out = append(out, e.(string))
	}
	return out
}

func TestKroExamples(t *testing.T) {
	b := NewBuilder()
	for _, file := range kroexamples.RGDFiles(t) {
		t.Run(filepath.Base(filepath.Dir(file)), func(t *testing.T) {
			rgds, err := LoadFiles(file)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			if len(rgds) != 1 {
				t.Fatalf("got %d definitions, want 1", len(rgds))
			}
			g, err := b.Build(rgds[0])
			if err != nil {
				t.Fatalf("build:\n%v", err)
			}
			want := kroOrder(t, filepath.Dir(file))
			if want != nil && !slices.Equal(g.TopologicalOrder, want) {
				t.Errorf("topological order %v, kro says %v", g.TopologicalOrder, want)
			}
			if len(g.TopologicalOrder) != len(rgds[0].Spec.Resources) {
				t.Errorf("order %v misses resources", g.TopologicalOrder)
			}
		})
	}
}
