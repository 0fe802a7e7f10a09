package tui

import (
	"strings"
	"testing"

	"github.com/kroscope/kroscope/engine/state"
)

// twoConditions is the fixture with blog's deployment waiting on a
// two-condition readyWhen whose second condition is false.
func twoConditions() *state.Snapshot {
	s := fixture()
	blog := *s.Instances[0]
	blog.Resources = append([]state.Resource(nil), blog.Resources...)
	d := &blog.Resources[2]
	d.ReadyWhen = []string{"${deployment.status.observedGeneration >= deployment.metadata.generation}", "${deployment.status.availableReplicas > deployment.spec.replicas}"}
	d.WaitingFor = "readyWhen ${deployment.status.availableReplicas > deployment.spec.replicas} is false"
	d.ReadyChecks = []state.ReadyCheck{
		{Expr: "deployment.status.observedGeneration >= deployment.metadata.generation", Result: "true", OK: true,
			Operands: []state.Operand{{Path: "deployment.status.observedGeneration", Value: "3"}, {Path: "deployment.metadata.generation", Value: "3"}}},
		{Expr: "deployment.status.availableReplicas > deployment.spec.replicas", Result: "false",
			Operands: []state.Operand{{Path: "deployment.status.availableReplicas", Value: "1"}, {Path: "deployment.spec.replicas", Value: "1"}}},
	}
	out := *s
	out.Instances = append([]*state.Instance{&blog}, s.Instances[1:]...)
	return &out
}

// "The inspector says readyWhen ... is false but not the operands": it
// shows both conditions, which one is false, and the values each reads.
func TestNewUserReadyWhenShowsOperands(t *testing.T) {
	tm, _ := flowOver(t, twoConditions(), Options{}, 160, 40)
	send(tm, "enter", "j", "j")
	var out string
	eventually(t, "the deployment inspected", func() bool { out = tmFrame(t, tm); return strings.Contains(out, "deployment  apps/v1 Deployment") })
	for _, want := range []string{
		"deployment.status.availableReplicas = 1", "deployment.spec.replicas = 1",
		"deployment.status.observedGeneration = 3",
		"${deployment.status.availableReplicas > deployment.spec.replicas}  is false",
		"(availableReplicas=1, replicas=1)",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("screen lacks %q:\n%s", want, out)
		}
	}
	finalFrame(t, tm)
}

func TestReadyWhyNamesFirstFalseCondition(t *testing.T) {
	r := twoConditions().Instances[0].Resources[2]
	got := reason(&r)
	want := "readyWhen ${deployment.status.availableReplicas > deployment.spec.replicas} is false (availableReplicas=1, replicas=1)"
	if got != want {
		t.Fatalf("reason = %q, want %q", got, want)
	}
	r.ReadyChecks = append(r.ReadyChecks, state.ReadyCheck{Expr: "x.y", Result: "pending: x is not observed yet", Operands: []state.Operand{{Path: "x.y", Missing: true}}})
	if got := reason(&r); !strings.HasSuffix(got, " and 1 more condition") {
		t.Fatalf("reason = %q", got)
	}
}
