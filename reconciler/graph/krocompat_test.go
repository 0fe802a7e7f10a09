package graph

import (
	"strings"
	"testing"

	"github.com/kroscope/kroscope/test/graphs"
)

var kroscopeOnlyRGD = strings.Replace(graphs.RGD("extensions", "Ext", `spec:
  replicas: integer | default=1
  tags: "[]string"
  ratio: "map[string]number"
status:
  biggest: ${math.greatest(1, schema.spec.replicas)}
validation:
- expression: "!has(self.replicas) || self.replicas < 10"
  message: too many`,
	graphs.ConfigMap("config", "x-${string(math.ceil(2.5))}", "plain: ${schema.spec.tags.join(\",\")}\nbits: ${string(math.bitOr(1, 2))}",
		"includeWhen:\n- ${sets.contains(schema.spec.tags, [\"a\"])}\nreadyWhen:\n- ${math.abs(-1) == 1}")),
	"\nspec:\n", "\nspec:\n  defaultServiceAccounts:\n    \"*\": reconciler\n", 1)

// TestKroWarnings: kroscope's extensions are each reported with the
// resource id and field, and a graph kro accepts gets none.
func TestKroWarnings(t *testing.T) {
	rgds, err := Parse([]byte(kroscopeOnlyRGD), "ext.yaml")
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewBuilder().Build(rgds[0])
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range KroWarnings(rgds[0], g) {
		got = append(got, w.String())
	}
	want := []string{
		"ext.yaml: extensions: spec.schema.validation[0]: kro has no spec.schema.validation",
		"ext.yaml: extensions: spec.schema.spec.ratio: kro has no SimpleSchema type number",
		"ext.yaml: extensions: spec.defaultServiceAccounts: kro has no spec.defaultServiceAccounts",
		"ext.yaml: extensions: resource config: spec.resources[0].template.data.bits: kro has no CEL function math.bitOr",
		"ext.yaml: extensions: resource config: spec.resources[0].template.metadata.name: kro has no CEL function math.ceil",
		"ext.yaml: extensions: resource config: spec.resources[0].includeWhen[0]: kro has no CEL function sets.contains",
		"ext.yaml: extensions: resource config: spec.resources[0].readyWhen[0]: kro has no CEL function math.abs",
		"ext.yaml: extensions: spec.schema.status.biggest: kro has no CEL function math.greatest",
	}
	if len(got) != len(want) {
		t.Fatalf("got %d warnings, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("warning %d = %q, want prefix %q", i, got[i], want[i])
		}
	}

	g2, err := tryBuild(t, currentKroSchema)
	if err != nil {
		t.Fatal(err)
	}
	rgds, _ = Parse([]byte(currentKroSchema), "t.yaml")
	if ws := KroWarnings(rgds[0], g2); len(ws) != 0 {
		t.Fatalf("a kro graph got warnings: %v", ws)
	}

	// The same graph under kro's name before v0.2 loads, with a warning.
	old := strings.Replace(currentKroSchema, "kind: "+Kind, "kind: "+LegacyKind, 1)
	rgds, err = Parse([]byte(old), "old.yaml")
	if err != nil || len(rgds) != 1 {
		t.Fatalf("kind %s: %d definitions, %v", LegacyKind, len(rgds), err)
	}
	g3, err := NewBuilder().Build(rgds[0])
	if err != nil {
		t.Fatal(err)
	}
	ws := KroWarnings(rgds[0], g3)
	if len(ws) != 1 || !strings.Contains(ws[0].String(), "old.yaml: current: kind: kro serves no kind ResourceGroup (its name before v0.2); write kind: ResourceGraphDefinition") {
		t.Fatalf("kind %s: warnings %v", LegacyKind, ws)
	}
}
