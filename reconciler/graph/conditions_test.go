package graph

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/kroscope/kroscope/reconciler/graph/cellib"
	"github.com/kroscope/kroscope/test/graphs"
)

// condRGD has a ConfigMap, a list-valued status field and status.conditions
// entries given by conds (YAML list items).
func condRGD(conds string) string {
	return `
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata:
  name: condtest
spec:
  schema:
    apiVersion: v1alpha1
    kind: CondTest
    spec:
      name: string
    status:
      endpoints:
      - ${string(cm.data.a)}
      - ${string(cm.data.b)}
      ports:
      - name: ${string(cm.data.a)}
        port: ${int(cm.data.port)}
      conditions:
` + conds + `
  resources:
` + graphs.Indent(graphs.ConfigMap("cm", "${schema.spec.name}", "a: x"), 2)
}

const goodConds = `      - '${runtime.newCondition({type: "DataReady", status: has(cm.data.a) ? "True" : "False", reason: "Checked", message: "a=" + cm.data.a})}'
      - '${[runtime.newCondition({type: "Named", status: "True", reason: schema.spec.name}), runtime.newCondition({type: "Copied", status: runtime.condition(schema, "Ready").status, reason: "FromReady"})]}'`

// TestStatusConditionsAndLists: conditions compile into Graph.Conditions
// (not status fields), list-valued status fields render element by
// element and get an array schema in the CRD.
func TestStatusConditionsAndLists(t *testing.T) {
	g := buildOne(t, condRGD(goodConds))
	if len(g.Conditions) != 2 || !g.HasConditions() {
		t.Fatalf("conditions = %d", len(g.Conditions))
	}
	for _, f := range g.Status {
		if f.Segments[0] == StatusConditionsKey {
			t.Fatalf("conditions compiled as a status field %s", f.Path)
		}
	}
	cm := map[string]any{"data": map[string]any{"a": "x", "b": "y", "port": "80"}}
	vars := Vars{"schema": map[string]any{"spec": map[string]any{"name": "web"}}, "cm": cm}
	st, err := g.RenderStatus(vars)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"endpoints": []any{"x", "y"},
		"ports":     []any{map[string]any{"name": "x", "port": int64(80)}},
	}
	if !reflect.DeepEqual(st, want) {
		t.Errorf("status = %#v, want %#v", st, want)
	}
	// A pending element leaves its list out (kro writes a null, which the
	// API server rejects for a list of strings); other fields stay.
	delete(cm["data"].(map[string]any), "a")
	st, _ = g.RenderStatus(vars)
	if got, ok := st["endpoints"]; ok {
		t.Errorf("endpoints with a pending element = %#v, want it left out", got)
	}
	if _, ok := st["ports"]; ok {
		t.Errorf("ports reads the pending value too: %#v", st["ports"])
	}
	cm["data"].(map[string]any)["a"] = "x"

	builtins := []any{map[string]any{"type": "Ready", "status": "False", "reason": "NotReady", "message": "m"}}
	conds, incomplete, err := g.EvalConditions(vars, builtins)
	if err != nil || incomplete {
		t.Fatalf("EvalConditions: %v (incomplete %v)", err, incomplete)
	}
	wantConds := []cellib.Condition{
		{ConditionType: "DataReady", Status: "True", Reason: "Checked", Message: "a=x"},
		{ConditionType: "Named", Status: "True", Reason: "web"},
		{ConditionType: "Copied", Status: "False", Reason: "FromReady"},
	}
	if !reflect.DeepEqual(conds, wantConds) {
		t.Errorf("conditions = %+v, want %+v", conds, wantConds)
	}
	// cm not observed: the first entry, which reads it, is pending.
	conds, incomplete, err = g.EvalConditions(Vars{"schema": vars["schema"]}, builtins)
	if err != nil || !incomplete || len(conds) != 2 || conds[0].ConditionType != "Named" {
		t.Errorf("pending: %+v incomplete=%v err=%v", conds, incomplete, err)
	}

	props := g.Instance.CRD.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"].Properties
	if s := props["endpoints"]; s.Type != "array" || s.Items.Schema.Type != "string" {
		t.Errorf("endpoints schema = %+v", s)
	}
	ports := props["ports"]
	if ports.Type != "array" || ports.Items.Schema.Properties["port"].Type != "integer" || ports.Items.Schema.Properties["name"].Type != "string" {
		t.Errorf("ports schema = %+v", ports)
	}
	if _, ok := props["conditions"]; !ok {
		t.Error("CRD has no status.conditions")
	}
}

// TestConditionsDegraded: a failing entry is dropped, so are both
// conditions of a duplicated type, and the error says why.
func TestConditionsDegraded(t *testing.T) {
	g := buildOne(t, condRGD(`      - '${runtime.newCondition({type: "A", status: cm.data.a == "x" ? "True" : "Nope"})}'
      - '${runtime.newCondition({type: "B", status: "True"})}'
      - '${[runtime.newCondition({type: "C", status: "True"}), runtime.newCondition({type: "C", status: "False"})]}'`))
	vars := Vars{"schema": map[string]any{}, "cm": map[string]any{"data": map[string]any{"a": "z"}}}
	conds, _, err := g.EvalConditions(vars, nil)
	if !errors.Is(err, ErrConditionsDegraded) {
		t.Fatalf("err = %v", err)
	}
	for _, w := range []string{"conditions[0]", "status must be one of True, False, Unknown", "duplicate condition type(s) [C] dropped"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q: %v", w, err)
		}
	}
	if len(conds) != 1 || conds[0].ConditionType != "B" {
		t.Errorf("kept %+v, want only B", conds)
	}
}

// TestConditionsRejected: the build errors kro gives for conditions, and
// runtime outside them.
func TestConditionsRejected(t *testing.T) {
	cases := map[string]struct {
		src  string
		want []string
	}{
		"not a condition": {condRGD(`      - ${"x" + cm.data.a}`), []string{"spec.schema.status.conditions[0]", "returns string, not a condition"}},
		"not standalone":  {condRGD(`      - x-${cm.data.a}`), []string{"conditions[0]", "not a standalone expression"}},
		"not a list":      {strings.Replace(condRGD(""), "      conditions:\n", "      conditions: ${cm.data.a}\n", 1), []string{"status.conditions must be a list"}},
		"duplicate literal type": {condRGD(`      - '${runtime.newCondition({type: "A", status: "True"})}'
      - '${runtime.newCondition({type: "A", status: "False"})}'`), []string{"conditions[1]", `condition type "A" is declared by more than one conditions entry`}},
		"literal status": {condRGD(`      - '${runtime.newCondition({type: "A", status: "Yes"})}'`), []string{`status must be one of True, False, Unknown (got "Yes")`}},
		"reads own condition": {condRGD(`      - '${runtime.newCondition({type: "A", status: "True"})}'
      - '${runtime.newCondition({type: "B", status: runtime.condition(schema, "A").status})}'`), []string{`runtime.condition(schema, "A"): custom conditions cannot reference each other`}},
		"reads unknown condition": {condRGD(`      - '${runtime.newCondition({type: "B", status: runtime.condition(schema, "Zzz").status})}'`), []string{`"Zzz"): unknown condition type`}},
		"missing status":          {condRGD(`      - '${runtime.newCondition({type: "B"})}'`), []string{"'status' is required"}},
		"reads a left-out resource": {strings.Replace(condRGD(`      - '${runtime.newCondition({type: "A", status: cm.data.a})}'`), "      apiVersion: v1\n      kind: ConfigMap", "      apiVersion: v1/x/y\n      kind: ConfigMap", 1),
			[]string{`apiVersion "v1/x/y" is invalid`, `conditions[0]: ${runtime.newCondition({type: "A", status: cm.data.a})}: column 42: resource "cm" is left out for its own errors`}},
		"runtime in a template": {strings.Replace(condRGD(goodConds), "        a: x", `        a: '${string(runtime.newCondition({type: "A", status: "True"}).status)}'`, 1),
			[]string{"spec.resources[0].template.data.a", "runtime can only be used in spec.schema.status.conditions"}},
		"runtime in a status field": {strings.Replace(condRGD(goodConds), "      - ${string(cm.data.b)}", `      - '${runtime.condition(schema, "Ready").status}'`, 1),
			[]string{"spec.schema.status.endpoints[1]", "runtime can only be used in spec.schema.status.conditions"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rgds, err := Parse([]byte(tc.src), "cond.yaml")
			if err != nil {
				t.Fatal(err)
			}
			_, err = NewBuilder().Build(rgds[0])
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
