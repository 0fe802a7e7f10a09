package reconciler

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
	"github.com/kroscope/kroscope/reconciler/redact"
	"github.com/kroscope/kroscope/reconciler/requeue"
	"github.com/kroscope/kroscope/test/graphs"
	"github.com/kroscope/kroscope/test/graphtest"
)

var unitGraph = graphs.RGD("unit", "Unit", "spec:\n  v: string | default=x",
	graphs.ConfigMap("a", "${schema.metadata.name}-a", "v: ${schema.spec.v}"),
	graphs.ConfigMap("b", "${schema.metadata.name}-b", "v: ${a.data.v}"))

func unitController(t *testing.T) *Controller {
	t.Helper()
	return controllerOf(t, unitGraph)
}

// controllerOf is a controller of the graph doc with no clients.
func controllerOf(t *testing.T, doc string) *Controller {
	t.Helper()
	g := graphtest.Build(t, doc, "unit.yaml")
	cs := client.NewSetFromClients(client.Clients{})
	return NewController(logr.Discard(), ReconcileConfig{DefaultRequeueDuration: 7 * time.Second}, g.Instance.GVR, g, cs, nil, metadata.NewGraphLabeler(g.Name, g.UID))
}

func unitRun(t *testing.T, states map[string]string, now time.Time) *run {
	return unitRunOf(unitController(t), states, now)
}

// unitRunOf is a run of c's graph wired for an instance already read,
// its resources in states, its clock stopped at now.
func unitRunOf(c *Controller, states map[string]string, now time.Time) *run {
	inst := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kro.run/v1alpha1", "kind": "Unit",
		"metadata": map[string]any{"name": "u", "namespace": "ns", "generation": int64(4), "uid": "u-1",
			"creationTimestamp": "2026-01-01T00:00:00Z"},
	}}
	opts := runOptions{Options: Options{Now: func() time.Time { return now }}}
	r := c.newRun(context.Background(), ctrl.Request{}, opts, &redact.Set{}, logr.Discard())
	io := reach{ctx: r.ctx, objs: client.NewObjects(c.clientSet, nil), errs: &r.out}
	r.p = c.newParts(io, "", inst, &r.obs, opts, r.red, r.log)
	for id, s := range states {
		r.obs.details[id].State = s
		if s == ResourceStateError || s == ResourceStateFailed {
			r.obs.details[id].Err = fmt.Errorf("%s broke", id)
		}
		if s == ResourceStatePending {
			r.obs.details[id].WaitingFor = "waiting for a"
		}
	}
	return r
}

func TestInstanceStateAndRequeue(t *testing.T) {
	cases := []struct {
		states   map[string]string
		want     string
		decision requeue.Decision
	}{
		{map[string]string{"a": ResourceStateSynced, "b": ResourceStateSkipped}, InstanceStateActive, requeue.Forget},
		{map[string]string{"a": ResourceStateCreated, "b": ResourceStatePending}, InstanceStateInProgress, requeue.Later},
		{map[string]string{"a": ResourceStateSynced, "b": ResourceStateUpdating}, InstanceStateInProgress, requeue.Later},
		{map[string]string{"a": ResourceStateFailed, "b": ResourceStatePending}, InstanceStateFailed, requeue.Drop},
		{map[string]string{"a": ResourceStateFailed, "b": ResourceStateError}, InstanceStateError, requeue.RateLimited},
	}
	for _, c := range cases {
		r := unitRun(t, c.states, time.Now())
		r.out.set(r.obs.instanceState())
		if r.out.st != c.want {
			t.Errorf("%v: state %s, want %s", c.states, r.out.st, c.want)
		}
		err := r.out.queueError(r.cfg.DefaultRequeueDuration)
		if err != nil {
			err = fmt.Errorf("wrapped: %w", err) // typed errors survive wrapping
		}
		d, after := requeue.Decide(err)
		if d != c.decision {
			t.Errorf("%v: decision %v, want %v", c.states, d, c.decision)
		}
		if d == requeue.Later && after != 7*time.Second {
			t.Errorf("requeue after %s, want DefaultRequeueDuration", after)
		}
	}
	r := unitRun(t, map[string]string{"a": ResourceStateSynced, "b": ResourceStatePending}, time.Now())
	if _, msg := r.obs.instanceState(); msg != "b: waiting for a" {
		t.Errorf("message %q should say what b waits for", msg)
	}
}

func condMap(status map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, c := range status["conditions"].([]any) {
		m := c.(map[string]any)
		out[m["type"].(string)] = m
	}
	return out
}

// TestBuildStatusConditions pins kro's condition shape: types, reasons,
// messages, Ready following its dependents, lastTransitionTime (creation
// time first, kept while unchanged, "now" on a change) and the order
// (oldest change first, Ready last).
func TestBuildStatusConditions(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) // the instance's creation
	r := unitRun(t, map[string]string{"a": ResourceStateSynced, "b": ResourceStatePending}, t0.Add(time.Minute))
	r.out.set(r.obs.instanceState())
	st := r.p.status.buildStatus(&r.out, map[string]any{"extra": "v", "state": "ignored"})
	if st["state"] != InstanceStateInProgress || st["extra"] != "v" {
		t.Fatalf("status %v", st)
	}
	c := condMap(st)
	if c["Ready"]["status"] != "False" || c["Ready"]["reason"] != "NotReady" || c["Ready"]["observedGeneration"] != int64(4) ||
		c["Ready"]["message"] != "awaiting resource readiness: b: waiting for a" {
		t.Errorf("Ready %v", c["Ready"])
	}
	if c["InstanceManaged"]["message"] != "instance is properly managed with finalizers and labels" ||
		c["GraphResolved"]["reason"] != "Resolved" || c["GraphResolved"]["message"] != "runtime graph created and all resources resolved" {
		t.Errorf("sub-conditions %v", c)
	}
	for typ, cond := range c {
		if cond["lastTransitionTime"] != t0.Format(time.RFC3339) {
			t.Errorf("%s first written at %v, want the creation time", typ, cond["lastTransitionTime"])
		}
	}
	if got := condTypes(st); got != "InstanceManaged,GraphResolved,ResourcesReady,Ready" {
		t.Errorf("order %s", got)
	}

	// Later, ready: only the conditions whose status moved get a new time,
	// and they move behind the others.
	t1 := t0.Add(time.Hour)
	r2 := unitRun(t, map[string]string{"a": ResourceStateSynced, "b": ResourceStateSynced}, t1)
	r2.p.inst.u.Object["status"] = st
	r2.out.set(r2.obs.instanceState())
	st2 := r2.p.status.buildStatus(&r2.out, nil)
	c2 := condMap(st2)
	if c2["Ready"]["status"] != "True" || c2["Ready"]["reason"] != "Ready" || c2["Ready"]["message"] != "" ||
		c2["Ready"]["lastTransitionTime"] != t1.Format(time.RFC3339) {
		t.Errorf("Ready after becoming ready: %v", c2["Ready"])
	}
	if c2["ResourcesReady"]["reason"] != "AllResourcesReady" || c2["ResourcesReady"]["message"] != "all resources are created and ready" ||
		c2["ResourcesReady"]["lastTransitionTime"] != t1.Format(time.RFC3339) {
		t.Errorf("ResourcesReady %v", c2["ResourcesReady"])
	}
	if c2["InstanceManaged"]["lastTransitionTime"] != t0.Format(time.RFC3339) {
		t.Errorf("InstanceManaged time moved without a status change: %v", c2["InstanceManaged"])
	}

	// ERROR and FAILED both read as kro's "resource error".
	for _, state := range []string{InstanceStateError, InstanceStateFailed} {
		r3 := unitRun(t, nil, t1)
		r3.out.set(state, "a: boom")
		if c := condMap(r3.p.status.buildStatus(&r3.out, nil)); c["ResourcesReady"]["reason"] != "NotReady" || c["ResourcesReady"]["message"] != "resource error: a: boom" {
			t.Errorf("%s: ResourcesReady %v", state, c["ResourcesReady"])
		}
	}
}

func condTypes(status map[string]any) string {
	var out []string
	for _, c := range status["conditions"].([]any) {
		out = append(out, c.(map[string]any)["type"].(string))
	}
	return strings.Join(out, ",")
}

func TestManagementFailureShowsInConditions(t *testing.T) {
	r := unitRun(t, nil, time.Now())
	r.out.managedErr = errors.New("forbidden: cannot patch")
	r.out.st = InstanceStateError
	c := condMap(r.p.status.buildStatus(&r.out, nil))
	if c["InstanceManaged"]["reason"] != "ManagementFailed" || c["Ready"]["message"] != "finalizer/labeling failed: forbidden: cannot patch" ||
		c["ResourcesReady"]["reason"] != "AwaitingReconciliation" {
		t.Errorf("conditions %v", c)
	}
}

// TestApplyOrders pins kro's deletion waves: resources nothing depends on
// are the highest wave, each dependency one below its lowest dependent.
func TestApplyOrders(t *testing.T) {
	c := unitController(t) // b reads a
	if got := c.applyOrders; got["a"] != 1 || got["b"] != 2 {
		t.Errorf("apply orders %v, want a=1 b=2", got)
	}
}

func TestSettlingOwnWrites(t *testing.T) {
	const (
		created  = ResourceStateCreated
		synced   = ResourceStateSynced
		skipped  = ResourceStateSkipped
		updating = ResourceStateUpdating
		waiting  = ResourceStateWaitingForReadiness
		pending  = ResourceStatePending
	)
	// An UPDATING resource whose write adopted kro's object.
	const adopted = "UPDATING (adopted)"
	cases := []struct {
		state  string
		states []string
		want   bool
	}{
		{InstanceStateInProgress, []string{created, created, created}, true},
		// Taking kro's objects over: kroscope's own write, once (#40).
		{InstanceStateInProgress, []string{adopted, adopted, synced}, true},
		{InstanceStateInProgress, []string{adopted, updating}, true},
		{InstanceStateInProgress, []string{synced, created, skipped}, true},
		{InstanceStateInProgress, []string{created, updating}, true},
		// Waits that outlive this pass are written to status.
		{InstanceStateInProgress, []string{created, waiting}, false},
		{InstanceStateInProgress, []string{created, pending}, false},
		// Someone fighting over an object: UPDATING on every pass.
		{InstanceStateInProgress, []string{updating, synced}, false},
		{InstanceStateActive, []string{synced}, false},
		{InstanceStateError, []string{created, ResourceStateError}, false},
	}
	for _, c := range cases {
		r := &run{obs: observations{details: map[string]*ResourceDetail{}}}
		r.out.st = c.state
		for i, s := range c.states {
			if s == adopted {
				s = updating
				if r.obs.adopted == nil {
					r.obs.adopted = map[string]bool{}
				}
				r.obs.adopted[fmt.Sprint(i)] = true
			}
			r.obs.details[fmt.Sprint(i)] = &ResourceDetail{State: s}
		}
		if got := r.settlingOwnWrites(); got != c.want {
			t.Errorf("%s %v: settling %v, want %v", c.state, c.states, got, c.want)
		}
	}
}

func TestApplyOrdersLikeKro(t *testing.T) {
	// d reads b reads a; e reads a and c. kro's reverse topological layers:
	// {d, e} (no dependents), then {b, c}, then {a}; waves 3, 2, 1.
	g := &graph.Graph{
		TopologicalOrder: []string{"a", "c", "b", "e", "d"},
		Resources: map[string]*graph.Resource{
			"a": {ID: "a"}, "c": {ID: "c"},
			"b": {ID: "b", Dependencies: []string{"a"}},
			"e": {ID: "e", Dependencies: []string{"a", "c"}},
			"d": {ID: "d", Dependencies: []string{"b"}},
		},
	}
	got := applyOrders(g)
	want := map[string]int{"d": 3, "e": 3, "b": 2, "c": 2, "a": 1}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("apply order of %s = %d, want %d (all %v)", id, got[id], w, got)
		}
	}
}

// A kind the API server does not serve is a graph that cannot be
// resolved: GraphResolved False/ResolutionFailed, which Ready copies.
func TestGraphResolvedFalseOnUnservedKind(t *testing.T) {
	r := unitRun(t, map[string]string{"a": ResourceStateError, "b": ResourceStatePending}, time.Now())
	r.obs.details["a"].Err = errors.New("resource a: kind example.com/v1, Kind=Widget is not served by the API server")
	r.out.set(r.obs.instanceState())
	c := condMap(r.p.status.buildStatus(&r.out, nil))
	if c["GraphResolved"]["status"] != "False" || c["GraphResolved"]["reason"] != "ResolutionFailed" ||
		!strings.Contains(c["GraphResolved"]["message"].(string), "is not served") {
		t.Errorf("GraphResolved %v", c["GraphResolved"])
	}
	if c["Ready"]["status"] != "False" {
		t.Errorf("Ready %v", c["Ready"])
	}
}

// A paused instance: ReconciliationSuspended, and the written state is
// the one it had.
func TestSuspendedConditions(t *testing.T) {
	r := unitRun(t, nil, time.Now())
	r.p.inst.u.Object["status"] = map[string]any{"state": "ACTIVE"}
	r.out.suspended, r.out.st = true, InstanceStateSuspended
	st := r.p.status.buildStatus(&r.out, nil)
	c := condMap(st)
	if c["ResourcesReady"]["reason"] != "ReconciliationSuspended" || c["ResourcesReady"]["message"] != "reconciliation suspended via kro.run/reconcile annotation" ||
		c["Ready"]["reason"] != "ReconciliationSuspended" || st["state"] != "ACTIVE" {
		t.Errorf("status %v", st)
	}
}

func TestPromoteSettledWrites(t *testing.T) {
	cases := []struct {
		states  map[string]string
		settled []string
		want    bool
	}{
		{map[string]string{"a": ResourceStateCreated, "b": ResourceStateCreated}, []string{"a", "b"}, true},
		{map[string]string{"a": ResourceStateSynced, "b": ResourceStateUpdating}, []string{"b"}, true},
		// b came back different from what was applied: the next pass looks again.
		{map[string]string{"a": ResourceStateCreated, "b": ResourceStateCreated}, []string{"a"}, false},
		{map[string]string{"a": ResourceStateSynced, "b": ResourceStateSkipped}, nil, false},
	}
	for _, c := range cases {
		r := unitRun(t, c.states, time.Now())
		for _, id := range c.settled {
			r.obs.record(id, result{verdict: verdict{state: c.states[id]}, settled: true})
		}
		if got := r.obs.promoteSettledWrites(); got != c.want {
			t.Errorf("%v settled %v: promoted %v, want %v", c.states, c.settled, got, c.want)
		}
		for id, s := range c.states {
			want := s
			if c.want && (s == ResourceStateCreated || s == ResourceStateUpdating) {
				want = ResourceStateSynced
			}
			if got := r.obs.details[id].State; got != want {
				t.Errorf("%v settled %v: %s is %s, want %s", c.states, c.settled, id, got, want)
			}
		}
	}
}
