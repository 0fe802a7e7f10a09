package examples

import (
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/kroscope/kroscope/reconciler/graph"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
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

// TestRunawayTripsOnlyOnItsData: the runaway example passes validate's
// static cost estimate, and of its two instances only the one asking for
// a million rounds is stopped by the run-time cost limit: its data, not
// the graph, trips it.
func TestRunawayTripsOnlyOnItsData(t *testing.T) {
	rgds, err := graph.LoadFiles("runaway/rgd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	g, err := graph.NewBuilder().Build(rgds[0])
	if err != nil {
		t.Fatal(err)
	}
	if rejected, large := graph.EstimateCosts(g, graph.DefaultLimits); len(rejected)+len(large) != 0 {
		t.Fatalf("validate's estimate refuses or warns: %v %v", rejected, large)
	}
	data, err := fs.ReadFile(FS(), "runaway/instances.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		// Through JSON into unstructured, as from the API server: integers
		// stay integers.
		js, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		var u unstructured.Unstructured
		if err := u.UnmarshalJSON(js); err != nil {
			t.Fatal(err)
		}
		inst := u.Object
		inst["metadata"].(map[string]any)["namespace"] = "demo"
		obj, err := g.Resources["probe"].Render(graph.Vars{graph.SchemaIdentifier: inst})
		name := inst["metadata"].(map[string]any)["name"].(string)
		var le *graph.LimitError
		switch {
		case errors.As(err, &le):
			got[name] = le.Limit
		case err != nil:
			t.Fatalf("%s: %v", name, err)
		default:
			got[name], _, _ = unstructured.NestedString(obj.Object, "data", "squares")
		}
	}
	// 0² + 1² + … + 99² = 328350.
	if len(got) != 2 || got["steady"] != "328350" || got["spinner"] != "cost" {
		t.Errorf("got %v, want steady rendered (328350) and spinner stopped by the cost limit", got)
	}
}
