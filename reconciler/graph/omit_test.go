package graph

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kroscope/kroscope/test/graphs"
)

// omitRGD builds a ConfigMap whose data and list fields may be omitted;
// extra is appended to the ConfigMap resource entry (includeWhen...).
func omitRGD(extra, status, name string) string {
	if name == "" {
		name = "${schema.spec.name}"
	}
	return graphs.RGD("omittest", "OmitTest", "spec:\n  name: string\n  note: string | default=\"\"\nstatus:\n  x: "+status,
		graphs.Template("cm", "v1", "ConfigMap", `name: "`+name+`"
annotations:
  note: '${schema.spec.note != "" ? schema.spec.note : omit()}'`, `data:
  kept: "yes"
  note: '${schema.spec.note == "" ? omit() : schema.spec.note}'
  nested: '${json.marshal({"a": 1})}'
immutable: ${omit()}
binaryData: '${ {"k": omit()} }'`, strings.ReplaceAll("\n"+extra, "\n    ", "\n")))
}

// TestOmitRemovesFields: with the gate on, a field whose expression
// yields omit() is absent from the rendered object, also inside a map the
// expression returns; the other fields are untouched.
func TestOmitRemovesFields(t *testing.T) {
	g, err := tryBuild(t, omitRGD("", "${cm.data.kept}", ""), WithCELOmit(true))
	if err != nil {
		t.Fatal(err)
	}
	inst := map[string]any{"metadata": map[string]any{"name": "i"}, "spec": map[string]any{"name": "web", "note": ""}}
	u, err := g.Resources["cm"].Render(Vars{"schema": inst})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata":   map[string]any{"name": "web", "annotations": map[string]any{}},
		"data":       map[string]any{"kept": "yes", "nested": `{"a":1}`},
		"binaryData": map[string]any{},
	}
	if !reflect.DeepEqual(u.Object, want) {
		t.Fatalf("rendered\n%#v\nwant\n%#v", u.Object, want)
	}
	inst["spec"].(map[string]any)["note"] = "hi"
	u, err = g.Resources["cm"].Render(Vars{"schema": inst})
	if err != nil {
		t.Fatal(err)
	}
	if got := u.Object["data"].(map[string]any)["note"]; got != "hi" {
		t.Errorf("data.note = %#v, want hi", got)
	}
	if got := u.GetAnnotations()["note"]; got != "hi" {
		t.Errorf("annotation = %#v, want hi", got)
	}
}

// TestOmitRemovesListElements: an element that is omit() leaves the list.
func TestOmitRemovesListElements(t *testing.T) {
	src := strings.TrimRight(omitRGD("", "${cm.data.kept}", ""), "\n") + `
      list:
      - a
      - '${schema.spec.note == "" ? omit() : "b"}'
      - ${[1, omit(), 2]}
`
	g, err := tryBuild(t, src, WithCELOmit(true))
	if err != nil {
		t.Fatal(err)
	}
	u, err := g.Resources["cm"].Render(Vars{"schema": map[string]any{"spec": map[string]any{"name": "web", "note": ""}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []any{"a", []any{int64(1), int64(2)}}
	if got := u.Object["list"]; !reflect.DeepEqual(got, want) {
		t.Fatalf("list = %#v, want %#v", got, want)
	}
}

// TestOmitRejected: without the gate omit() is a build error naming the
// flag; with it, omit() is still rejected outside templates, inside a
// string template and on metadata.name.
func TestOmitRejected(t *testing.T) {
	cases := []struct {
		name    string
		src     string
		enabled bool
		want    []string
	}{
		{"gate off", omitRGD("", "${cm.data.kept}", ""), false,
			[]string{"spec.resources[0].template.data.note", "omit() requires the CELOmitFunction feature gate", "--enable-cel-omit"}},
		{"includeWhen", omitRGD("    includeWhen:\n    - ${omit()}", "${cm.data.kept}", ""), true,
			[]string{"spec.resources[0].includeWhen[0]", "omit() can only be used in resource template expressions"}},
		{"readyWhen", omitRGD("    readyWhen:\n    - ${omit() == 1}", "${cm.data.kept}", ""), true,
			[]string{"spec.resources[0].readyWhen[0]", "only be used in resource template expressions"}},
		{"forEach", omitRGD("    forEach:\n    - zone: ${[omit()]}", "${string(size(cm))}", "${schema.spec.name}-${zone}"), true,
			[]string{"spec.resources[0].forEach[0].zone", "only be used in resource template expressions"}},
		{"status", omitRGD("", "${omit()}", ""), true,
			[]string{"spec.schema.status.x", "only be used in resource template expressions"}},
		{"string template", omitRGD("", "${cm.data.kept}", "${schema.spec.name}-${omit()}"), true,
			[]string{"spec.resources[0].template.metadata.name", "omit() must be the whole field value"}},
		{"metadata.name", omitRGD("", "${cm.data.kept}", "${omit()}"), true,
			[]string{"spec.resources[0].template.metadata.name", "omit() cannot be used on metadata.name"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tryBuild(t, tc.src, WithCELOmit(tc.enabled))
			if err == nil {
				t.Fatal("built; want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}
