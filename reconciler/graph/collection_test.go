package graph

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kroscope/kroscope/test/graphs"
)

var collectionRGD = graphs.RGD("collectiontest", "CollectionTest", `spec:
  names: "[]string"
  zones: "[]string"
status:
  count: ${size(cms)}`,
	graphs.ConfigMap("base", "base", "prefix: p"),
	graphs.ConfigMap("cms", "${base.data.prefix}-${name}-${zone}", "name: ${name}\nzone: ${zone}",
		"forEach:\n- name: ${schema.spec.names}\n- zone: ${schema.spec.zones}\nreadyWhen:\n- ${each.data.ready == \"yes\"}"),
	graphs.ConfigMap("summary", "summary", "count: ${string(size(cms))}\nfirst: ${cms[0].metadata.name}"))

func collectionVars(names, zones []any) Vars {
	return Vars{
		"schema": map[string]any{"metadata": map[string]any{"name": "x"}, "spec": map[string]any{"names": names, "zones": zones}},
		"base":   map[string]any{"data": map[string]any{"prefix": "p"}},
	}
}

func TestCollectionGraph(t *testing.T) {
	g := buildOne(t, collectionRGD)
	cms := g.Resources["cms"]
	if !cms.IsCollection() || g.Resources["base"].IsCollection() {
		t.Fatalf("IsCollection wrong: cms %v base %v", cms.IsCollection(), g.Resources["base"].IsCollection())
	}
	var dims []string
	for _, d := range cms.ForEach {
		dims = append(dims, d.Name+"="+d.Expression.Source)
	}
	if want := []string{"name=schema.spec.names", "zone=schema.spec.zones"}; !reflect.DeepEqual(dims, want) {
		t.Errorf("dimensions = %v, want %v", dims, want)
	}
	// The dimension and the template read base; iterators are no dependency.
	if !reflect.DeepEqual(cms.Dependencies, []string{"base"}) {
		t.Errorf("cms dependencies = %v", cms.Dependencies)
	}
	if !reflect.DeepEqual(g.Resources["summary"].Dependencies, []string{"cms"}) {
		t.Errorf("summary dependencies = %v", g.Resources["summary"].Dependencies)
	}
	if want := []string{"base", "cms", "summary"}; !reflect.DeepEqual(g.TopologicalOrder, want) {
		t.Errorf("order = %v, want %v", g.TopologicalOrder, want)
	}
	// Dependents see the collection as a list of observed items.
	obs := []any{map[string]any{"metadata": map[string]any{"name": "one"}}, map[string]any{"metadata": map[string]any{"name": "two"}}}
	sum, err := g.Resources["summary"].Render(Vars{"cms": obs})
	if err != nil {
		t.Fatal(err)
	}
	if got := sum.Object["data"]; !reflect.DeepEqual(got, map[string]any{"count": "2", "first": "one"}) {
		t.Errorf("summary data = %v", got)
	}
	st, err := g.RenderStatus(Vars{"cms": obs})
	if err != nil || st["count"] != int64(2) {
		t.Errorf("status = %v, %v", st, err)
	}
}

func TestRenderCollection(t *testing.T) {
	cms := buildOne(t, collectionRGD).Resources["cms"]
	t.Run("cartesian order, last dimension fastest", func(t *testing.T) {
		items, err := cms.RenderCollection(collectionVars([]any{"a", "b"}, []any{"z1", "z2", "z3"}))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, it := range items {
			got = append(got, it.GetName())
			d := it.Object["data"].(map[string]any)
			if !strings.HasSuffix(it.GetName(), fmt.Sprintf("-%s-%s", d["name"], d["zone"])) {
				t.Errorf("item %s has data %v", it.GetName(), d)
			}
		}
		want := []string{"p-a-z1", "p-a-z2", "p-a-z3", "p-b-z1", "p-b-z2", "p-b-z3"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("items = %v, want %v", got, want)
		}
	})
	t.Run("empty dimension gives no items", func(t *testing.T) {
		items, err := cms.RenderCollection(collectionVars([]any{"a"}, []any{}))
		if err != nil || len(items) != 0 {
			t.Errorf("got %d items, err %v; want none", len(items), err)
		}
	})
	t.Run("pending dimension waits", func(t *testing.T) {
		v := collectionVars([]any{"a"}, []any{"z"})
		delete(v["schema"].(map[string]any)["spec"].(map[string]any), "zones")
		_, err := cms.RenderCollection(v)
		if !IsDataPending(err) {
			t.Fatalf("err = %v, want data pending", err)
		}
		var ee *EvalError
		if !errors.As(err, &ee) || ee.Path != "forEach[1].zone" {
			t.Errorf("err does not name the dimension: %v", err)
		}
	})
	t.Run("pending dependency waits", func(t *testing.T) {
		v := collectionVars([]any{"a"}, []any{"z"})
		delete(v, "base")
		if _, err := cms.RenderCollection(v); !IsDataPending(err) {
			t.Fatalf("err = %v, want data pending", err)
		}
	})
	t.Run("more than 1000 items", func(t *testing.T) {
		many := make([]any, 40)
		for i := range many {
			many[i] = fmt.Sprint(i)
		}
		_, err := cms.RenderCollection(collectionVars(many, many))
		if err == nil || IsDataPending(err) || !strings.Contains(err.Error(), "more than 1000 items") {
			t.Fatalf("err = %v, want the size limit", err)
		}
		// Exactly at the limit is fine.
		if items, err := cms.RenderCollection(collectionVars(many[:25], many)); err != nil || len(items) != 1000 {
			t.Errorf("1000 items: got %d, err %v", len(items), err)
		}
	})
	t.Run("duplicate names", func(t *testing.T) {
		_, err := cms.RenderCollection(collectionVars([]any{"a", "a"}, []any{"z"}))
		if err == nil || IsDataPending(err) || !strings.Contains(err.Error(), "items 0 and 1 both render ConfigMap p-a-z") {
			t.Fatalf("err = %v, want a duplicate error", err)
		}
	})
	t.Run("a map is not a list", func(t *testing.T) {
		v := collectionVars([]any{"a"}, nil)
		v["schema"].(map[string]any)["spec"].(map[string]any)["zones"] = map[string]any{"k": "v"}
		_, err := cms.RenderCollection(v)
		if err == nil || IsDataPending(err) || !strings.Contains(err.Error(), "returned object, not a list") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a template failure names the item", func(t *testing.T) {
		v := collectionVars([]any{"a", "b"}, []any{"z"})
		v["base"] = map[string]any{"data": map[string]any{}}
		_, err := cms.RenderCollection(v)
		if !IsDataPending(err) || !strings.Contains(err.Error(), "item 0 (name=a, zone=z)") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestCollectionReadiness(t *testing.T) {
	cms := buildOne(t, collectionRGD).Resources["cms"]
	ready, _, err := cms.IsReady(map[string]any{"data": map[string]any{"ready": "yes"}})
	if err != nil || !ready {
		t.Errorf("ready item: %v, %v", ready, err)
	}
	ready, reason, err := cms.IsReady(map[string]any{"data": map[string]any{"ready": "no"}})
	if err != nil || ready || !strings.Contains(reason, "each.data.ready") {
		t.Errorf("unready item: %v, %q, %v", ready, reason, err)
	}
}

// configMapResolver types every kind as a minimal ConfigMap.
type configMapResolver struct{}

func (configMapResolver) ResolveSchema(schema.GroupVersionKind) (*spec.Schema, error) {
	str := spec.StringProperty()
	obj := &spec.Schema{}
	obj.Type = spec.StringOrArray{"object"}
	obj.Properties = map[string]spec.Schema{
		"apiVersion": *str,
		"kind":       *str,
		"metadata": {SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}, Properties: map[string]spec.Schema{
			"name": *str, "namespace": *str,
		}}},
		"data": *spec.MapProperty(str),
	}
	return obj, nil
}

// With typed resources, a collection is still list(dyn) to its readers and
// its iterators are declared in both the checking and the run-time
// environment.
func TestCollectionTyped(t *testing.T) {
	g := buildOne(t, collectionRGD, WithSchemaResolver(configMapResolver{}))
	items, err := g.Resources["cms"].RenderCollection(collectionVars([]any{"a"}, []any{"z"}))
	if err != nil || len(items) != 1 || items[0].GetName() != "p-a-z" {
		t.Fatalf("items %v, err %v", items, err)
	}
	obs := []any{map[string]any{"metadata": map[string]any{"name": "one"}}}
	if _, err := g.Resources["summary"].Render(Vars{"cms": obs}); err != nil {
		t.Fatal(err)
	}
	ready, _, err := g.Resources["cms"].IsReady(map[string]any{"data": map[string]any{"ready": "yes"}})
	if err != nil || !ready {
		t.Errorf("ready = %v, %v", ready, err)
	}
	// A typo in an item's field is caught against the kind's schema.
	bad := strings.Replace(collectionRGD, "${base.data.prefix}", "${base.dat.prefix}", 1)
	if _, err := tryBuild(t, bad, WithSchemaResolver(configMapResolver{})); err == nil || !strings.Contains(err.Error(), "undefined field 'dat'") {
		t.Errorf("err = %v, want undefined field 'dat'", err)
	}
}

func TestConstantProduct(t *testing.T) {
	for _, c := range []struct {
		sizes []int64
		text  string
		over  bool
	}{
		{nil, "", false},
		{[]int64{1000}, "1000", false},
		{[]int64{1001}, "1001", true},
		{[]int64{10, 100}, "10 x 100", false},
		{[]int64{10, 101}, "10 x 101", true},
		{[]int64{1000, 1000, 1000}, "1000 x 1000 x 1000", true},
		{[]int64{1 << 62, 1 << 62, 1 << 62}, "4611686018427387904 x 4611686018427387904 x 4611686018427387904", true},
		{[]int64{1000, 1000, 0}, "0", false},
	} {
		text, over := constantProduct(c.sizes)
		if text != c.text || over != c.over {
			t.Errorf("constantProduct(%v) = %q, %v; want %q, %v", c.sizes, text, over, c.text, c.over)
		}
	}
}

// TestConstantSizeEvaluationsBounded: one Build evaluates at most
// maxConstantEvals constant dimensions (each may take the CEL time limit);
// the others are left to the run-time check.
func TestConstantSizeEvaluationsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: kro.run/v1alpha1\nkind: ResourceGraphDefinition\nmetadata: {name: many-constant}\nspec:\n  schema: {apiVersion: v1alpha1, kind: ManyConstant}\n  resources:\n")
	for i := range maxConstantEvals + 5 {
		fmt.Fprintf(&b, "  - id: c%d\n    forEach:\n    - num: ${lists.range(%d)}\n    template:\n      apiVersion: v1\n      kind: ConfigMap\n      metadata: {name: '${schema.metadata.name}-%d-${string(num)}'}\n", i, 1001+i, i)
	}
	rgds, err := Parse([]byte(b.String()), "many.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewBuilder().Build(rgds[0])
	if got := strings.Count(fmt.Sprint(err), "a collection has at most 1000 items"); got != maxConstantEvals {
		t.Errorf("%d collections refused, want %d (the bound): %v", got, maxConstantEvals, err)
	}
}
