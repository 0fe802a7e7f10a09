package reconciler

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/test/graphtest"
)

// TestGateDecidesFromEarlierLayers: whether a resource may render is a
// function of its dependencies' details and ready values only.
func TestGateDecidesFromEarlierLayers(t *testing.T) {
	cases := []struct {
		name   string
		aState string
		aReady bool
		held   bool
		want   verdict
	}{
		{"dependency pending", ResourceStatePending, false, true, pending("waiting for a (pending)")},
		{"dependency waiting", ResourceStateWaitingForReadiness, false, true, pending("waiting for a (waiting for readiness)")},
		{"dependency skipped", ResourceStateSkipped, false, true, verdict{state: ResourceStateSkipped, reason: "depends on a, which is skipped"}},
		{"dependency ready", ResourceStateSynced, true, false, verdict{}},
	}
	for _, c := range cases {
		r := unitRun(t, map[string]string{"a": c.aState}, time.Now())
		r.obs.readyVars = graph.Vars{graph.SchemaIdentifier: map[string]any{}}
		if c.aReady {
			r.obs.readyVars["a"] = map[string]any{"data": map[string]any{"v": "x"}}
		}
		v, skip, held := r.obs.gate(r.g.Resources["b"])
		if skip != "" {
			v = verdict{state: ResourceStateSkipped, reason: skip}
		}
		if held != c.held || v != c.want {
			t.Errorf("%s: gate = %+v (skip %q), held %v; want %+v, held %v", c.name, v, skip, held, c.want, c.held)
		}
	}
}

// TestRecordMakesTheResultReadable: a result becomes the resource's detail,
// its value readable by status always and by dependents only when ready,
// and a Secret's values are known to redaction.
func TestRecordMakesTheResultReadable(t *testing.T) {
	r := unitRun(t, nil, time.Now())
	r.obs.readyVars, r.obs.allVars = graph.Vars{}, graph.Vars{}
	secret := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "s"}, "stringData": map[string]any{"token": "hunter2hunter2"}}}
	r.obs.record("a", result{verdict: verdict{state: ResourceStateCreated}, name: "s", observed: secret,
		value: secret.Object, ready: true, settled: true})
	r.obs.record("b", result{verdict: verdict{state: ResourceStateWaitingForReadiness, reason: "not yet"},
		value: map[string]any{"kind": "ConfigMap"}})
	if d := r.obs.details["a"]; d.State != ResourceStateCreated || d.Name != "s" || d.Observed != secret {
		t.Errorf("detail a = %+v", d)
	}
	if d := r.obs.details["b"]; d.State != ResourceStateWaitingForReadiness || d.WaitingFor != "not yet" {
		t.Errorf("detail b = %+v", d)
	}
	if _, ok := r.obs.readyVars["a"]; !ok {
		t.Error("a ready resource is not readable by its dependents")
	}
	if _, ok := r.obs.readyVars["b"]; ok {
		t.Error("a resource not ready is readable by its dependents")
	}
	if _, ok := r.obs.allVars["b"]; !ok {
		t.Error("an observed resource is not readable by status")
	}
	if !r.obs.settled["a"] || r.obs.settled["b"] {
		t.Errorf("settled = %v, want a only", r.obs.settled)
	}
	if got := r.red.String("token hunter2hunter2"); strings.Contains(got, "hunter2") {
		t.Errorf("redaction does not know the recorded Secret's value: %q", got)
	}
}

// TestFailedState: an evaluation stopped by the wall-clock CEL time limit
// is retried (ERROR); every other failure, the deterministic limits
// included, waits for a change (FAILED).
func TestFailedState(t *testing.T) {
	evalErr := func(err error) error {
		return fmt.Errorf("resource a: readyWhen: %w", &graph.EvalError{Err: err})
	}
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"time limit", evalErr(&graph.LimitError{Limit: "time", Value: "100ms"}), ResourceStateError},
		{"cost limit", evalErr(&graph.LimitError{Limit: "cost", Value: "1000000"}), ResourceStateFailed},
		{"size limit", evalErr(&graph.LimitError{Limit: "size", Value: "32 MiB"}), ResourceStateFailed},
		{"type error", evalErr(errors.New("no such overload")), ResourceStateFailed},
		{"rejected", errors.New("the API server rejected it"), ResourceStateFailed},
	}
	for _, c := range cases {
		if got := failedState(c.err); got != c.want {
			t.Errorf("%s: failedState = %s, want %s", c.name, got, c.want)
		}
		if got := failed(c.err).state; got != c.want {
			t.Errorf("%s: failed(err).state = %s, want %s", c.name, got, c.want)
		}
	}
}

// A readyWhen that cannot be evaluated says so once: the evaluation error
// names the resource and the field, so the verdict does not wrap it in
// "resource a: readyWhen:" again; a collection's item names the item in
// the resource's place.
func TestReadyWhenErrorSaysItOnce(t *testing.T) {
	src := strings.Replace(unitGraph, "  - id: b\n", "    readyWhen:\n    - ${a.data.v / 0 > 1}\n  - id: b\n", 1)
	g := graphtest.Build(t, src, "unit.yaml")
	observed := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "u-a", "namespace": "ns"}, "data": map[string]any{"v": int64(4)}}}
	out := judge(g.Resources["a"], result{}, observed, ResourceStateSynced)
	if out.verdict.err == nil {
		t.Fatalf("verdict %+v, want an evaluation error", out.verdict)
	}
	msg := out.verdict.err.Error()
	if strings.Count(msg, "resource a") != 1 || strings.Count(msg, "readyWhen") != 1 || !strings.HasPrefix(msg, "resource a field readyWhen[0]: ") {
		t.Errorf("message repeats itself or lost its subject: %q", msg)
	}
}
