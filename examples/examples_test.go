package examples

import (
	"io/fs"
	"slices"
	"testing"

	"github.com/kroscope/kroscope/reconciler/graph"
)

// Every example must be a valid graph (checked by the same builder the
// engine uses), with its instances and README embedded.
func TestExamplesAreValid(t *testing.T) {
	names := Names()
	for _, want := range []string{"broken", "fanout", "webapp"} {
		if !slices.Contains(names, want) {
			t.Fatalf("example %q missing from %v", want, names)
		}
	}
	b := graph.NewBuilder()
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			for _, f := range []string{"rgd.yaml", "instances.yaml", "README.md"} {
				if _, err := fs.Stat(FS(), name+"/"+f); err != nil {
					t.Fatalf("%s/%s: %v", name, f, err)
				}
			}
			rgds, err := graph.LoadFiles(name + "/rgd.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if len(rgds) != 1 {
				t.Fatalf("%s/rgd.yaml holds %d definitions, want 1", name, len(rgds))
			}
			if _, err := b.Build(rgds[0]); err != nil {
				t.Fatalf("%s/rgd.yaml: %v", name, err)
			}
		})
	}
}
