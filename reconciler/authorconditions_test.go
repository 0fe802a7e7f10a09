package reconciler

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kroscope/kroscope/reconciler/graph"
)

// authorRun is a unitRun whose graph declares status.conditions: one
// entry reads resource a, one copies the built-in Ready, and extra adds
// more entries.
func authorRun(t *testing.T, extra string, now time.Time) *run {
	t.Helper()
	src := strings.Replace(unitGraph, "      v: string | default=x\n", `      v: string | default=x
    status:
      conditions:
      - '${runtime.newCondition({type: "AReady", status: a.data.v == "x" ? "True" : "False", reason: "Checked", message: "v=" + a.data.v})}'
      - '${runtime.newCondition({type: "Mirror", status: runtime.condition(schema, "Ready").status})}'
`+extra, 1)
	r := unitRunOf(controllerOf(t, src), map[string]string{"a": ResourceStateSynced, "b": ResourceStateSynced}, now)
	r.out.set(r.obs.instanceState())
	return r
}

// TestAuthorConditionsReplaceBuiltins: the authored conditions are the
// whole conditions list, stamped with generation and times; Mirror reads
// the built-in Ready; state stays ACTIVE.
func TestAuthorConditionsReplaceBuiltins(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := authorRun(t, "", t0)
	r.obs.allVars = graph.Vars{"schema": map[string]any{"spec": map[string]any{"v": "x"}}, "a": map[string]any{"data": map[string]any{"v": "x"}}}
	st := r.p.status.buildStatus(&r.out, nil)
	want := []any{
		map[string]any{"type": "AReady", "status": "True", "reason": "Checked", "message": "v=x", "lastTransitionTime": t0.Format(time.RFC3339), "observedGeneration": int64(4)},
		map[string]any{"type": "Mirror", "status": "True", "lastTransitionTime": t0.Format(time.RFC3339), "observedGeneration": int64(4)},
	}
	if !reflect.DeepEqual(st["conditions"], want) {
		t.Fatalf("conditions\n%#v\nwant\n%#v", st["conditions"], want)
	}
	if st["state"] != InstanceStateActive {
		t.Errorf("state %v", st["state"])
	}

	// An hour later a's value changed: AReady moves (new time), Mirror
	// keeps its time. Then a is not observed: AReady is pending and the
	// previous AReady is kept.
	t1 := t0.Add(time.Hour)
	r2 := authorRun(t, "", t1)
	r2.p.inst.u.Object["status"] = st
	r2.obs.allVars = graph.Vars{"schema": map[string]any{}, "a": map[string]any{"data": map[string]any{"v": "y"}}}
	st2 := r2.p.status.buildStatus(&r2.out, nil)
	c := condMap(st2)
	if c["AReady"]["status"] != "False" || c["AReady"]["lastTransitionTime"] != t1.Format(time.RFC3339) {
		t.Errorf("AReady after change %v", c["AReady"])
	}
	if c["Mirror"]["lastTransitionTime"] != t0.Format(time.RFC3339) {
		t.Errorf("Mirror time moved without a status change: %v", c["Mirror"])
	}
	r3 := authorRun(t, "", t1)
	r3.p.inst.u.Object["status"] = st2
	r3.obs.allVars = graph.Vars{"schema": map[string]any{}}
	c3 := condMap(r3.p.status.buildStatus(&r3.out, nil))
	if len(c3) != 2 || c3["AReady"]["status"] != "False" || c3["AReady"]["message"] != "v=y" {
		t.Errorf("pending entry did not keep the previous condition: %v", c3)
	}
}

// TestAuthorConditionsDegraded: a duplicated type is dropped and the
// instance is in ERROR, saying why.
func TestAuthorConditionsDegraded(t *testing.T) {
	r := authorRun(t, `      - '${[runtime.newCondition({type: "Dup", status: "True"}), runtime.newCondition({type: "Dup", status: "False"})]}'
`, time.Now())
	r.obs.allVars = graph.Vars{"schema": map[string]any{}, "a": map[string]any{"data": map[string]any{"v": "x"}}}
	st := r.p.status.buildStatus(&r.out, nil)
	c := condMap(st)
	if _, dup := c["Dup"]; dup || len(c) != 2 {
		t.Errorf("conditions %v", c)
	}
	if st["state"] != InstanceStateError || r.out.st != InstanceStateError || !strings.Contains(r.out.msg, "duplicate condition type(s) [Dup] dropped") {
		t.Errorf("state %v / %s: %s", st["state"], r.out.st, r.out.msg)
	}
}

// TestAuthorConditionsWhileDeleting: nothing is evaluated; the built-in
// ResourcesReady joins the previous author conditions. A management
// failure keeps the previous conditions as they are.
func TestAuthorConditionsWhileDeleting(t *testing.T) {
	prev := map[string]any{"conditions": []any{
		map[string]any{"type": "AReady", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"},
	}}
	r := authorRun(t, "", time.Now())
	r.p.inst.u.Object["status"] = prev
	r.out.deleting, r.out.st, r.out.msg = true, InstanceStateDeleting, "deleting b"
	c := condMap(r.p.status.buildStatus(&r.out, nil))
	if len(c) != 2 || c["AReady"]["lastTransitionTime"] != "2026-01-01T00:00:00Z" || c[ConditionResourcesReady] == nil {
		t.Errorf("deleting: %v", c)
	}

	r = authorRun(t, "", time.Now())
	r.p.inst.u.Object["status"] = prev
	r.out.managedErr, r.out.st = errors.New("forbidden"), InstanceStateError
	if got := r.p.status.buildStatus(&r.out, nil)["conditions"]; !reflect.DeepEqual(got, prev["conditions"]) {
		t.Errorf("management failure: conditions %v, want the previous ones", got)
	}
}
