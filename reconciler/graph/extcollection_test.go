package graph

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kroscope/kroscope/test/graphs"
)

// extRGD is a graph whose resource "cms" is the externalRef given (indented
// under externalRef) and whose "summary" ConfigMap reads it with summary.
func extRGD(ref, readyWhen, summary string) string {
	return graphs.RGD("ext", "Ext", "spec:\n  team: string | default=a\nstatus:\n  count: ${size(cms)}",
		graphs.ConfigMap("other", "${schema.metadata.name}-other", "team: b"),
		// ref and readyWhen are written where they stand in the document.
		strings.ReplaceAll("- id: cms\n"+readyWhen+"    externalRef:\n      apiVersion: v1\n      kind: ConfigMap\n"+ref, "\n  ", "\n"),
		graphs.ConfigMap("summary", "${schema.metadata.name}-summary", "value: "+summary))
}

func TestExternalCollectionBuild(t *testing.T) {
	const sel = "      metadata:\n        selector:\n          matchLabels:\n            team: a\n"
	cases := []struct {
		name, ref, readyWhen, summary string
		// wantErr are substrings of the error; none means it must build.
		wantErr []string
		deps    []string // cms's dependencies
		static  string   // StaticSelector, "" when templated
	}{
		{name: "matchLabels", ref: sel, summary: `${string(size(cms))}`, static: "team=a"},
		{name: "map over items", ref: sel, summary: `${cms.map(c, c.metadata.name).join(",")}`, static: "team=a"},
		{name: "readyWhen each", ref: sel, readyWhen: "    readyWhen:\n    - ${each.data.ready == \"true\"}\n", summary: `${string(size(cms))}`, static: "team=a"},
		{name: "matchExpressions", ref: "      metadata:\n        namespace: ns1\n        selector:\n          matchExpressions:\n          - key: team\n            operator: In\n            values: [a, b]\n          - key: gone\n            operator: DoesNotExist\n",
			summary: `${string(size(cms))}`, static: "!gone,team in (a,b)"},
		{name: "schema in value", ref: "      metadata:\n        selector:\n          matchLabels:\n            team: ${schema.spec.team}\n", summary: `${string(size(cms))}`},
		{name: "resource in expression value", ref: "      metadata:\n        selector:\n          matchExpressions:\n          - key: team\n            operator: In\n            values: ['${other.data.team}']\n",
			summary: `${string(size(cms))}`, deps: []string{"other"}},
		{name: "resource in namespace", ref: "      metadata:\n        namespace: ${other.metadata.namespace}\n        selector:\n          matchLabels:\n            team: a\n",
			summary: `${string(size(cms))}`, deps: []string{"other"}, static: "team=a"},
		{name: "name and selector", ref: "      metadata:\n        name: x\n        selector:\n          matchLabels:\n            team: a\n",
			wantErr: []string{"spec.resources[1].externalRef.metadata", "metadata.name and metadata.selector are both set"}},
		{name: "neither", ref: "      metadata:\n        namespace: x\n",
			wantErr: []string{"spec.resources[1].externalRef.metadata.name", "metadata.name is missing", "or metadata.selector"}},
		{name: "bad operator", ref: "      metadata:\n        selector:\n          matchExpressions:\n          - key: team\n            operator: Equals\n            values: [a]\n",
			wantErr: []string{"spec.resources[1].externalRef.metadata.selector.matchExpressions[0].operator", `operator "Equals"`}},
		{name: "In without values", ref: "      metadata:\n        selector:\n          matchExpressions:\n          - key: team\n            operator: In\n",
			wantErr: []string{"matchExpressions[0].values", "non-empty values"}},
		{name: "expression in key", ref: "      metadata:\n        selector:\n          matchExpressions:\n          - key: ${schema.spec.team}\n            operator: Exists\n",
			wantErr: []string{"matchExpressions[0].key", "expressions are not allowed"}},
		{name: "unknown selector field", ref: "      metadata:\n        selector:\n          matchLabel:\n            team: a\n",
			wantErr: []string{"selector.matchLabel", `unknown field "matchLabel"`}},
		{name: "each in selector", ref: "      metadata:\n        selector:\n          matchLabels:\n            team: ${each.metadata.name}\n",
			wantErr: []string{"externalRef.metadata.selector.matchLabels.team", "reads each"}},
		{name: "readyWhen reads its id", ref: sel, readyWhen: "    readyWhen:\n    - ${size(cms) > 0}\n", summary: `x`,
			wantErr: []string{"spec.resources[1].readyWhen[0]", "may read only each"}},
		{name: "id is a list", ref: sel, summary: `${cms.data.x}`,
			wantErr: []string{"spec.resources[2].template.data.value"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			summary := c.summary
			if summary == "" {
				summary = "x"
			}
			g, err := tryBuild(t, extRGD(c.ref, c.readyWhen, summary))
			if len(c.wantErr) > 0 {
				if err == nil {
					t.Fatal("built, want an error")
				}
				for _, w := range c.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r := g.Resources["cms"]
			if !r.External || !r.ExternalCollection || !r.IsList() || r.IsCollection() {
				t.Fatalf("cms: External=%v ExternalCollection=%v IsList=%v IsCollection=%v", r.External, r.ExternalCollection, r.IsList(), r.IsCollection())
			}
			if strings.Join(r.Dependencies, ",") != strings.Join(c.deps, ",") {
				t.Errorf("dependencies %v, want %v", r.Dependencies, c.deps)
			}
			if got, _ := r.StaticSelector(); got != c.static {
				t.Errorf("StaticSelector %q, want %q", got, c.static)
			}
			if !contains(g.Resources["summary"].Dependencies, "cms") {
				t.Errorf("summary does not depend on cms: %v", g.Resources["summary"].Dependencies)
			}
		})
	}
}

func TestExternalCollectionRuntime(t *testing.T) {
	g, err := tryBuild(t, extRGD("      metadata:\n        selector:\n          matchLabels:\n            team: ${schema.spec.team}\n",
		"    readyWhen:\n    - ${each.data.ready == \"true\"}\n", `${cms.map(c, c.metadata.name).join(",")}`))
	if err != nil {
		t.Fatal(err)
	}
	r := g.Resources["cms"]
	inst := map[string]any{"metadata": map[string]any{"name": "i"}, "spec": map[string]any{"team": "blue"}}
	obj, err := r.Render(Vars{"schema": inst})
	if err != nil {
		t.Fatal(err)
	}
	sel, err := LabelSelector(obj)
	if err != nil || sel.String() != "team=blue" {
		t.Fatalf("selector %v, %v; want team=blue", sel, err)
	}
	bad := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"selector": map[string]any{
		"matchLabels": map[string]any{"team": "not a valid value!"}}}}}
	if _, err := LabelSelector(bad); err == nil || !strings.Contains(err.Error(), "metadata.selector") {
		t.Errorf("bad selector: %v", err)
	}
	item := func(name, ready string) map[string]any {
		return map[string]any{"metadata": map[string]any{"name": name}, "data": map[string]any{"ready": ready}}
	}
	if ok, _, err := r.IsReady(item("a", "true")); !ok || err != nil {
		t.Errorf("ready item: %v %v", ok, err)
	}
	if ok, why, _ := r.IsReady(item("b", "false")); ok || !strings.Contains(why, "is false") {
		t.Errorf("unready item: %v %q", ok, why)
	}
	out, err := g.Resources["summary"].Render(Vars{"schema": inst, "cms": []any{item("a", "true"), item("b", "true")}})
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(out.Object, "data", "value"); v != "a,b" {
		t.Errorf("summary %q, want a,b", v)
	}
	st, err := g.RenderStatus(Vars{"schema": inst, "cms": []any{item("a", "true")}})
	if err != nil || st["count"] != int64(1) {
		t.Errorf("status %v, %v", st, err)
	}
}
