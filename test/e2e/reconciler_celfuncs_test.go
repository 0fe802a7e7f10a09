package e2e

import (
	"reflect"
	"testing"

	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/test/graphs"
)

// celFuncsGraph uses every function kro registers that kroscope lacked
// before issue 11, in a template and in status, plus omit() (gated), a
// status.conditions list built with runtime.newCondition and list-valued
// status fields. Expected values are kro v0.9.4's.
var celFuncsGraph = graphs.RGD("celfuncs", "CelFuncs", `spec:
  name: string
  note: string | default=""
  network: string | default="10.0.0.0/8"
status:
  password: ${config.data.password}
  addresses:
  - ${string(config.data.ip)}
  - ${string(config.data.port)}
  versions:
  - major: ${semver(string(config.data.version)).major()}
    newer: ${semver(string(config.data.version)).isLessThan(semver("1.10.0"))}
  conditions:
  - |-
    ${runtime.newCondition({type: "ConfigReady", status: has(config.data.password) ? "True" : "False", reason: "Generated", message: "port " + config.data.port})}
  - |-
    ${[runtime.newCondition({type: "Mirrored", status: runtime.condition(schema, "ResourcesReady").status, reason: "FromResourcesReady"})]}`,
	graphs.Template("config", "v1", "ConfigMap", `name: ${schema.spec.name}
annotations:
  note: |-
    ${schema.spec.note != "" ? schema.spec.note : omit()}`, `data:
  password: ${random.seededString(10, "test-seed")}
  port: ${string(random.seededInt(30000, 32768, "my-service"))}
  sha256: ${base64.encode(hash.sha256("hello world"))}
  md5: ${base64.encode(hash.md5("hello world"))}
  fnv64a: ${base64.encode(hash.fnv64a("hello world"))}
  marshal: |-
    ${json.marshal({"b": [1, 2.5, true], "a": {"z": "y"}})}
  unmarshal: |-
    ${string(int(json.unmarshal('{"n": 3}').n))}
  encode: |-
    ${json.encode({"k": "v"})}
  merge: |-
    ${json.marshal({"a": "1", "b": "2"}.merge({"b": "3"}))}
  deepMerge: |-
    ${json.marshal({"a": {"x": 1}, "k": 7}.deepMerge({"a": {"y": 2}}))}
  lists: |-
    ${json.marshal(lists.removeAtIndex(lists.insertAtIndex(lists.setAtIndex([1, 2, 3], 0, 9), 1, 5), 3))}
  ip: ${string(ip("10.1.2.3"))}
  ipFamily: ${string(ip("::1").family())}
  inNetwork: ${string(cidr(schema.spec.network).containsIP("10.1.2.3"))}
  masked: ${string(cidr("192.168.0.1/24").masked())}
  version: "1.2.3"
  minor: ${string(semver("1.2.3").minor())}
  note: |-
    ${schema.spec.note == "" ? omit() : schema.spec.note}`))

// TestReconcilerCELFunctions: the instance reaches ACTIVE; its ConfigMap
// holds kro's values for each function, omit() leaves out the note until
// one is set, the list-valued status fields and the authored conditions
// are written as kro writes them (they replace the built-in conditions).
func TestReconcilerCELFunctions(t *testing.T) {
	r := newRig(t, celFuncsGraph, func(c *rigConfig) { c.graphOpts = append(c.graphOpts, graph.WithCELOmit(true)) })
	r.create(`apiVersion: kro.run/v1alpha1
kind: CelFuncs
metadata:
  name: fn
spec:
  name: fn-config
`)
	r.untilState("fn", reconciler.InstanceStateActive)
	cm := r.get(gvrConfigMap, r.ns, "fn-config")
	if cm == nil {
		t.Fatal("ConfigMap fn-config was not created")
	}
	wantData := map[string]any{
		"password":  "5czheg3o5c",
		"port":      "31247",
		"sha256":    "uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek=",
		"md5":       "XrY7u+Ae7tCTyyK7j1rNww==",
		"fnv64a":    "d5pl5wI80uc=",
		"marshal":   `{"a":{"z":"y"},"b":[1,2.5,true]}`,
		"unmarshal": "3",
		"encode":    `{"k":"v"}`,
		"merge":     `{"a":"1","b":"3"}`,
		"deepMerge": `{"a":{"x":1,"y":2},"k":7}`,
		"lists":     `[9,5,2]`,
		"ip":        "10.1.2.3",
		"ipFamily":  "6",
		"inNetwork": "true",
		"masked":    "192.168.0.0/24",
		"version":   "1.2.3",
		"minor":     "2",
	}
	if got := cm.Object["data"]; !reflect.DeepEqual(got, wantData) {
		t.Errorf("data\n%#v\nwant\n%#v", got, wantData)
	}
	if _, ok := cm.GetAnnotations()["note"]; ok {
		t.Errorf("annotation note should be omitted: %v", cm.GetAnnotations())
	}

	inst := r.instance("fn")
	st := inst.Object["status"].(map[string]any)
	if st["password"] != "5czheg3o5c" {
		t.Errorf("status.password = %v", st["password"])
	}
	if got, want := st["addresses"], []any{"10.1.2.3", "31247"}; !reflect.DeepEqual(got, want) {
		t.Errorf("status.addresses = %#v, want %#v", got, want)
	}
	if got, want := st["versions"], []any{map[string]any{"major": int64(1), "newer": true}}; !reflect.DeepEqual(got, want) {
		t.Errorf("status.versions = %#v, want %#v", got, want)
	}
	conds, _ := st["conditions"].([]any)
	if len(conds) != 2 {
		t.Fatalf("conditions = %#v, want the two authored ones only", conds)
	}
	gen := inst.GetGeneration()
	for i, want := range []map[string]any{
		{"type": "ConfigReady", "status": "True", "reason": "Generated", "message": "port 31247", "observedGeneration": gen},
		{"type": "Mirrored", "status": "True", "reason": "FromResourcesReady", "observedGeneration": gen},
	} {
		got, _ := conds[i].(map[string]any)
		ltt, _ := got["lastTransitionTime"].(string)
		if ltt == "" {
			t.Errorf("conditions[%d] has no lastTransitionTime: %v", i, got)
		}
		delete(got, "lastTransitionTime")
		if !reflect.DeepEqual(got, want) {
			t.Errorf("conditions[%d] = %#v, want %#v", i, got, want)
		}
	}

	// A note makes both omitted fields appear.
	r.patchSpec("fn", map[string]any{"note": "hi"})
	r.until("fn", 60e9, "note written", func(o reconciler.Observation, _ error) bool {
		c := r.get(gvrConfigMap, r.ns, "fn-config")
		return c != nil && c.GetAnnotations()["note"] == "hi" && c.Object["data"].(map[string]any)["note"] == "hi"
	})
}
