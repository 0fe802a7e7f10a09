package reconciler

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
	"github.com/kroscope/kroscope/reconciler/requeue"
)

const unitGraph = `apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata:
  name: unit
spec:
  schema:
    apiVersion: v1alpha1
    kind: Unit
    spec:
      v: string | default=x
  resources:
  - id: a
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: ${schema.metadata.name}-a
      data:
        v: ${schema.spec.v}
  - id: b
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: ${schema.metadata.name}-b
      data:
        v: ${a.data.v}
`

func unitController(t *testing.T) *Controller {
	t.Helper()
	rgds, err := graph.Parse([]byte(unitGraph), "unit.yaml")
	if err != nil {
		t.Fatal(err)
	}
	g, err := graph.NewBuilder().Build(rgds[0])
	if err != nil {
		t.Fatal(err)
	}
	cs := client.NewSetFromClients(client.Clients{})
	return NewController(logr.Discard(), ReconcileConfig{DefaultRequeueDuration: 7 * time.Second}, g.Instance.GVR, g, cs, nil, metadata.NewGraphLabeler(g.Name, g.UID))
}

func unitRun(t *testing.T, states map[string]string, now time.Time) *run {
	c := unitController(t)
	inst := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kro.run/v1alpha1", "kind": "Unit",
		"metadata": map[string]any{"name": "u", "namespace": "ns", "generation": int64(4), "uid": "u-1"},
	}}
	r := &run{c: c, inst: inst, details: map[string]*ResourceDetail{}, now: func() time.Time { return now }}
	r.initDetails()
	for id, s := range states {
		r.details[id].State = s
		if s == ResourceStateError || s == ResourceStateFailed {
			r.details[id].Err = fmt.Errorf("%s broke", id)
		}
		if s == ResourceStatePending {
			r.details[id].WaitingFor = "waiting for a"
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
		r.state, r.message = r.instanceState()
		if r.state != c.want {
			t.Errorf("%v: state %s, want %s", c.states, r.state, c.want)
		}
		err := r.resultError()
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
	if _, msg := r.instanceState(); msg != "b: waiting for a" {
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

func TestBuildStatusConditions(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := unitRun(t, map[string]string{"a": ResourceStateSynced, "b": ResourceStatePending}, t0)
	r.state, r.message = r.instanceState()
	st := r.buildStatus(map[string]any{"extra": "v", "state": "ignored"})
	if st["state"] != InstanceStateInProgress || st["extra"] != "v" {
		t.Fatalf("status %v", st)
	}
	c := condMap(st)
	if c["Ready"]["status"] != "False" || c["Ready"]["reason"] != "NotReady" || c["Ready"]["observedGeneration"] != int64(4) {
		t.Errorf("Ready %v", c["Ready"])
	}
	if c["InstanceManaged"]["status"] != "True" || c["GraphResolved"]["status"] != "True" {
		t.Errorf("sub-conditions %v", c)
	}

	// Later, ready: only the conditions whose status moved get a new time.
	r.inst.Object["status"] = st
	t1 := t0.Add(time.Hour)
	r2 := unitRun(t, map[string]string{"a": ResourceStateSynced, "b": ResourceStateSynced}, t1)
	r2.inst.Object["status"] = st
	r2.state, r2.message = r2.instanceState()
	c2 := condMap(r2.buildStatus(nil))
	if c2["Ready"]["status"] != "True" || c2["Ready"]["lastTransitionTime"] != t1.Format(time.RFC3339) {
		t.Errorf("Ready after becoming ready: %v", c2["Ready"])
	}
	if c2["InstanceManaged"]["lastTransitionTime"] != t0.Format(time.RFC3339) {
		t.Errorf("InstanceManaged time moved without a status change: %v", c2["InstanceManaged"])
	}
}

func TestManagementFailureShowsInConditions(t *testing.T) {
	r := unitRun(t, nil, time.Now())
	r.managedErr = errors.New("forbidden: cannot patch")
	r.state = InstanceStateError
	c := condMap(r.buildStatus(nil))
	if c["InstanceManaged"]["reason"] != "ManagementFailed" || c["Ready"]["message"] != "forbidden: cannot patch" {
		t.Errorf("conditions %v", c)
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
	cases := []struct {
		state  string
		states []string
		want   bool
	}{
		{InstanceStateInProgress, []string{created, created, created}, true},
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
		r := &run{state: c.state, details: map[string]*ResourceDetail{}}
		for i, s := range c.states {
			r.details[fmt.Sprint(i)] = &ResourceDetail{State: s}
		}
		if got := r.settlingOwnWrites(); got != c.want {
			t.Errorf("%s %v: settling %v, want %v", c.state, c.states, got, c.want)
		}
	}
}
