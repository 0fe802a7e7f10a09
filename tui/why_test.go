package tui

import (
	"strings"
	"testing"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/theme"
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

// TestWhyReadsTheObjectCELSkipped: on a real API server the inspector's
// Why said "deployment.spec.replicas = (no value)" on a Deployment with
// replicas: 2 and no status yet: cel-go's == returns its left side's
// error (no status) without evaluating its right, so the check never
// read replicas. The value is now taken from the observed object.
func TestWhyReadsTheObjectCELSkipped(t *testing.T) {
	r := webappResources("team-a", "blog")[2]
	r.State, r.Ready = "WAITING_FOR_READINESS", at(0)
	r.Observed = pk(map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "blog", "namespace": "team-a"}, "spec": map[string]any{"replicas": int64(2)}})
	r.ReadyChecks = []state.ReadyCheck{{Expr: "deployment.status.availableReplicas == deployment.spec.replicas", Result: "pending: deployment.status is not observed yet",
		Operands: []state.Operand{{Path: "deployment.status.availableReplicas", Missing: true}, {Path: "deployment.spec.replicas", Missing: true}}}}
	if got := readyWhy(&r); !strings.Contains(got, "availableReplicas=(no value), replicas=2") {
		t.Errorf("Why = %q, want replicas=2 from the object", got)
	}
	out := plain(strings.Join(readyChecksView(theme.Must(theme.Options{Name: "dark"}), &r, 100), "\n"))
	if !strings.Contains(out, "deployment.spec.replicas = 2") || !strings.Contains(out, "deployment.status.availableReplicas = (no value)") {
		t.Errorf("the readyWhen lines:\n%s", out)
	}
}

// TestYAMLDiffLeavesOutServerFields: the diff of an unchanged Deployment
// marked its uid, managedFields and whole status as added; it leaves
// out what the server sets, by plan.Normalize (kroscope plan's rule).
func TestYAMLDiffLeavesOutServerFields(t *testing.T) {
	m, _ := newTestModel(t, fixture(), Options{}, 160, 40)
	press(m, "j", "enter", "j", "j", "y", "y", "y") // shop's deployment, the diff
	out := plain(m.Frame())
	if !strings.Contains(out, "YAML (diff)") || strings.Contains(out, "availableReplicas") || !strings.Contains(out, "(no difference") {
		t.Errorf("the diff of an unchanged Deployment:\n%s", out)
	}
	press(m, "k", "k") // the ConfigMap: the server set its uid and managedFields
	if out := plain(m.Frame()); strings.Contains(out, "uid") || strings.Contains(out, "managedFields") {
		t.Errorf("the ConfigMap's diff shows server-set fields:\n%s", out)
	}
}
