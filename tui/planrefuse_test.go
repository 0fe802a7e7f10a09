package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/plan"
)

// settle runs the commands an Update returned and feeds back the
// requests and results they return (timers and waits are dropped).
func settle(m *Model, cmd tea.Cmd) {
	feedBack(m, cmd, 50*time.Millisecond, true, func(msg tea.Msg) bool {
		switch msg.(type) {
		case requestsMsg, resultMsg:
			return true
		}
		return false
	})
}

// keys presses keys, settling what each one starts.
func keys(m *Model, ks ...string) {
	for _, k := range ks {
		_, cmd := m.Update(keyMsg(k))
		settle(m, cmd)
	}
}

// planModel is a model over b at w x h with `:plan v2.yaml` open.
func planModel(t *testing.T, b Backend, w, h int) *Model {
	t.Helper()
	m := newModel(b, Options{ConfigPath: "-", Theme: "dark", Now: func() time.Time { return fixedNow }})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	keys(m, ":")
	for _, r := range "plan v2.yaml" {
		keys(m, string(r))
	}
	keys(m, "enter")
	if !strings.Contains(plain(m.Frame()), "Plan of v2.yaml") {
		t.Fatalf("no plan:\n%s", plain(m.Frame()))
	}
	return m
}

// TestPlanCRDFailureIsARow: the summary counted a breaking CRD change
// as a failure no row showed ("2 would fail" over FAIL 1); it is a row
// of its own now, first, and enter shows the change.
func TestPlanCRDFailureIsARow(t *testing.T) {
	b := &applyBackend{planBackend: &planBackend{fakeBackend: newFake(fixture())}}
	m := planModel(t, schemaApply{b}, 100, 30)
	out := plain(m.Frame())
	golden.RequireEqual(t, out)
	if !strings.Contains(out, "2 would fail") {
		t.Fatalf("the summary changed:\n%s", out)
	}
	fails := 0
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 4 && f[3] == "1" && f[0] != "Plan:" {
			fails++
		}
	}
	if fails != 2 {
		t.Errorf("%d rows with FAIL 1, the summary says 2 would fail:\n%s", fails, out)
	}
	keys(m, "enter")
	if out := plain(m.Frame()); !strings.Contains(out, "! CRD webapps.kro.run: breaking schema change") || strings.Contains(out, "no instances") {
		t.Errorf("the CRD row's diff:\n%s", out)
	}
}

// schemaApply is applyBackend answering the breaking plan.
type schemaApply struct{ *applyBackend }

func (s schemaApply) Plan(ctx context.Context, paths ...string) ([]*plan.Plan, error) {
	return schemaPlanBackend{s.planBackend}.Plan(ctx, paths...)
}

// TestPlanApplyWarnsOfRefusal: applying a breaking graph hid its
// instances and the dialog had not said so; it says beforehand that the
// engine will refuse the graph, whole (wrapped, not cut), and the flash
// after the apply does not promise a rollout.
func TestPlanApplyWarnsOfRefusal(t *testing.T) {
	b := &applyBackend{planBackend: &planBackend{fakeBackend: newFake(fixture())}}
	m := planModel(t, schemaApply{b}, 80, 24)
	keys(m, "a")
	out := plain(m.Frame())
	golden.RequireEqual(t, out)
	flat := strings.Join(strings.Fields(strings.NewReplacer("│", " ", "╭", " ", "╰", " ").Replace(out)), " ")
	for _, want := range []string{"The engine will refuse graph webapp", `kro.run/allow-breaking-changes: "true"`, "--force-crd"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the dialog does not say %q:\n%s", want, out)
		}
	}
	keys(m, "right", "enter")
	if out := plain(m.Frame()); !strings.Contains(out, "the engine refuses webapp") || strings.Contains(out, "follows the rollout") {
		t.Errorf("after the apply:\n%s", out)
	}
}

// TestPlanApplyRefusesRGDFileFirst: a on a graph this kroscope serves
// from --rgd opened the dialog and refused only after; it refuses
// before.
func TestPlanApplyRefusesRGDFileFirst(t *testing.T) {
	snap := fixture()
	snap.Graphs[1].Source = "examples/webapp/rgd.yaml"
	b := &applyBackend{planBackend: &planBackend{fakeBackend: newFake(snap)}}
	m := planModel(t, b, 100, 30)
	keys(m, "a")
	out := plain(m.Frame())
	if strings.Contains(out, "Apply graph") || !strings.Contains(out, "serves graph webapp from --rgd examples/webapp/rgd.yaml") {
		t.Errorf("a on a graph served from a file:\n%s", out)
	}
	if got := b.appliedFiles(); len(got) != 0 {
		t.Errorf("applied %v", got)
	}
}

// TestUnservedInstanceStaysListed: an instance whose graph the engine
// stopped serving (a breaking definition refused) stays on the list,
// its last state marked unknown and the refusal as its message.
func TestUnservedInstanceStaysListed(t *testing.T) {
	snap := fixture()
	why := "CRD webapps.kro.run: breaking schema change refused (stored instances would no longer fit): spec.replicas: maximum lowered"
	snap.Graphs[1].Served, snap.Graphs[1].Err = false, why
	snap.Graphs[1].Status = state.GraphStatus{State: state.GraphInactive, Reason: why}
	for _, in := range snap.Instances {
		if in.Graph == "webapp" {
			in.Unserved = true
		}
	}
	m, _ := newTestModel(t, snap, Options{}, 200, 20)
	out := plain(m.Frame())
	golden.RequireEqual(t, out)
	if !strings.Contains(out, "? ACTIVE") || !strings.Contains(out, "not served: CRD webapps.kro.run") {
		t.Errorf("the unserved instance:\n%s", out)
	}
}

// TestPlanViewKeysAnswer: the plan view ignored r, y, i (and / in a
// diff) without a word and its footer floated under the table; each key
// now says where it works, the footer is the last line, a long diff line
// wraps, and q backs out (the diff, then the plan) instead of quitting.
func TestPlanViewKeysAnswer(t *testing.T) {
	b := &applyBackend{planBackend: &planBackend{fakeBackend: newFake(fixture())}}
	m := planModel(t, schemaApply{b}, 60, 15)
	lines := strings.Split(plain(m.Frame()), "\n")
	if len(lines) != 16 || !strings.Contains(lines[14], "enter diff") {
		t.Errorf("the footer is not the last line:\n%s", strings.Join(lines, "\n"))
	}
	for key, want := range map[string]string{"r": "r works on the instance list", "y": "y works on the instance list", "i": "i works on the instance list"} {
		keys(m, key)
		if out := plain(m.Frame()); !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
			t.Errorf("%s on the plan view: want %q\n%s", key, want, out)
		}
	}
	keys(m, "enter") // the CRD row: its change is one long line
	out := plain(m.Frame())
	if flat := strings.Join(strings.Fields(out), " "); !strings.Contains(flat, "breaking schema change (kro refuses it unless allowed):") {
		t.Errorf("the diff's long line is not whole:\n%s", out)
	}
	keys(m, "/")
	if out := plain(m.Frame()); !strings.Contains(out, "/ works on the blast radius") {
		t.Errorf("/ in the diff:\n%s", out)
	}
	keys(m, "q")
	if out := plain(m.Frame()); !strings.Contains(out, "CREATE") {
		t.Errorf("q did not close the diff:\n%s", out)
	}
	keys(m, "q")
	if out := plain(m.Frame()); strings.Contains(out, "CREATE") || !strings.Contains(out, "team-a/shop") || m.quitting {
		t.Errorf("q did not back out of the plan to the list:\n%s", out)
	}
	keys(m, "q")
	if !m.quitting {
		t.Error("q on the list did not quit")
	}
}
