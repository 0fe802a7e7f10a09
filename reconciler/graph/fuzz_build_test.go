package graph

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseBuild feeds arbitrary YAML through Parse and Build: neither may
// panic, and a graph that builds orders every resource exactly once.
func FuzzParseBuild(f *testing.F) {
	files, _ := filepath.Glob("testdata/invalid/*.yaml")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(evalRGD))
	f.Fuzz(func(t *testing.T, data []byte) {
		rgds, _ := Parse(data, "fuzz.yaml")
		for _, rgd := range rgds {
			g, err := NewBuilder().Build(rgd)
			if err != nil {
				continue
			}
			seen := map[string]bool{}
			for _, id := range g.TopologicalOrder {
				if seen[id] || g.Resources[id] == nil {
					t.Fatalf("bad order %v", g.TopologicalOrder)
				}
				seen[id] = true
			}
			if len(seen) != len(g.Resources) {
				t.Fatalf("order %v misses resources", g.TopologicalOrder)
			}
		}
	})
}
