package graph

import (
	"strings"
	"testing"
)

// Two readyWhen conditions, one false: every condition is judged (not only
// up to the first false) with the values of the fields it reads.
func TestExplainReadyShowsOperands(t *testing.T) {
	rgd := strings.Replace(evalRGD, "    - ${deployment.spec.replicas == deployment.status.availableReplicas}\n",
		"    - ${deployment.status.observedGeneration >= deployment.metadata.generation}\n    - ${deployment.status.availableReplicas > deployment.spec.replicas}\n", 1)
	g := buildOne(t, rgd)
	dep := g.Resources["deployment"]
	obs := map[string]any{
		"metadata": map[string]any{"generation": int64(3)},
		"spec":     map[string]any{"replicas": int64(1)},
		"status":   map[string]any{"availableReplicas": int64(1), "observedGeneration": int64(3)},
	}
	got := dep.ExplainReady(obs)
	if len(got) != 2 {
		t.Fatalf("checks: %+v", got)
	}
	if !got[0].OK || got[0].Result != "true" || len(got[0].Operands) != 2 ||
		got[0].Operands[0].Path != "deployment.status.observedGeneration" || got[0].Operands[0].Value != int64(3) ||
		got[0].Operands[1].Path != "deployment.metadata.generation" {
		t.Fatalf("first check: %+v", got[0])
	}
	c := got[1]
	if c.OK || c.Result != "false" {
		t.Fatalf("second check: %+v", c)
	}
	want := []Operand{{Path: "deployment.status.availableReplicas", Value: int64(1)}, {Path: "deployment.spec.replicas", Value: int64(1)}}
	if len(c.Operands) != 2 || c.Operands[0] != want[0] || c.Operands[1] != want[1] {
		t.Fatalf("operands = %+v, want %+v", c.Operands, want)
	}

	// A missing field: pending, and the operand says it has no value.
	delete(obs["status"].(map[string]any), "availableReplicas")
	c = dep.ExplainReady(obs)[1]
	if c.OK || !strings.HasPrefix(c.Result, "pending: ") || !c.Operands[0].Missing {
		t.Fatalf("pending check: %+v", c)
	}
}

func TestFormatValue(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{{int64(2), "2"}, {"a", `"a"`}, {nil, "null"}, {map[string]any{"k": "v"}, `{"k":"v"}`}, {strings.Repeat("x", 50), `"xxxxxxxxxxxxxxxx...`}} {
		if got := FormatValue(c.v, 20); got != c.want {
			t.Errorf("FormatValue(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}
