package graphs_test

import (
	"testing"

	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/test/graphs"
)

// TestConfigMapItem: the fields stand between the id and the template, and
// the data below the template, each at its indentation.
func TestConfigMapItem(t *testing.T) {
	got := graphs.ConfigMap("cm", "${schema.metadata.name}-cm", "k: v\nn: |-\n  two\n  lines", "readyWhen:\n- ${cm.data.k == \"v\"}")
	want := `- id: cm
  readyWhen:
  - ${cm.data.k == "v"}
  template:
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: ${schema.metadata.name}-cm
    data:
      k: v
      n: |-
        two
        lines
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got, want := graphs.ConfigMap("cm", "x", ""), "- id: cm\n  template:\n    apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: x\n"; got != want {
		t.Errorf("without data: got\n%s\nwant\n%s", got, want)
	}
}

func TestInstance(t *testing.T) {
	if got, want := graphs.Instance("Web", "app", ""), "apiVersion: kro.run/v1alpha1\nkind: Web\nmetadata:\n  name: app\nspec: {}\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := graphs.Instance("Web", "app", "a: 1\nb:\n  c: 2\n"), "apiVersion: kro.run/v1alpha1\nkind: Web\nmetadata:\n  name: app\nspec:\n  a: 1\n  b:\n    c: 2\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestGraphsBuild: what the builder writes is a graph kroscope builds,
// with the names, kind, schema and resources asked for.
func TestGraphsBuild(t *testing.T) {
	for name, doc := range map[string]string{
		"chain": graphs.Chain("chain", "Chain"),
		"fields": graphs.RGD("fields", "Fields", "spec:\n  enabled: boolean | default=true\nstatus:\n  v: ${cm.data.v}",
			graphs.ConfigMap("cm", "${schema.metadata.name}-cm", "v: x", "includeWhen:\n- ${schema.spec.enabled}"),
			graphs.Resource("ext", "externalRef:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: shared")),
	} {
		rgds, err := graph.Parse([]byte(doc), name+".yaml")
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, doc)
		}
		g, err := graph.NewBuilder().Build(rgds[0])
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, doc)
		}
		if g.Name != name || len(g.Resources) == 0 {
			t.Errorf("%s: built %q with %d resources", name, g.Name, len(g.Resources))
		}
	}
}
