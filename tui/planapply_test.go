package tui

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kroscope/kroscope/engine/state"
)

// applyBackend is planBackend with the engine's apply: it refuses with
// refuse when set, and remembers the files applied.
type applyBackend struct {
	*planBackend
	refuse  error
	applied [][]string
}

func (a *applyBackend) ApplyGraphRefused(...string) error { return a.refuse }

func (a *applyBackend) ApplyGraphs(_ context.Context, paths ...string) ([]string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.applied = append(a.applied, paths)
	return []string{"webapp"}, nil
}

func (a *applyBackend) appliedFiles() [][]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.applied)
}

// a on the plan asks first, saying what applying will do; Cancel (the
// default) applies nothing; confirmed, the engine applies the planned
// file and the instance list comes back.
func TestPlanApplyConfirm(t *testing.T) {
	b := &applyBackend{planBackend: &planBackend{fakeBackend: newFake(fixture())}}
	tm := newTeatest(t, b, Options{ConfigPath: "-", Theme: "dark"}, 160, 40)
	runCommand(tm, "plan v2.yaml")
	eventually(t, "the blast radius", func() bool { return strings.Contains(tmFrame(t, tm), "Plan of v2.yaml") })
	if f := footerLine(tmFrame(t, tm)); !strings.Contains(f, "apply") {
		t.Errorf("the plan's footer does not offer apply: %q", f)
	}
	send(tm, "a")
	eventually(t, "the confirmation", func() bool {
		f := tmFrame(t, tm)
		return strings.Contains(f, "Apply graph webapp from v2.yaml?") &&
			strings.Contains(f, "0 to create, 1 to change, 1 to prune across 3 instances; 1 would fail.")
	})
	send(tm, "enter") // Cancel is the default
	eventually(t, "cancelled", func() bool { return strings.Contains(tmFrame(t, tm), "cancelled") })
	if got := b.appliedFiles(); len(got) != 0 {
		t.Fatalf("cancelled, yet applied %v", got)
	}
	send(tm, "a", "right", "enter")
	eventually(t, "applied, back on the instances", func() bool {
		f := tmFrame(t, tm)
		return strings.Contains(f, "applied graph webapp") && !strings.Contains(f, "CREATE")
	})
	if got := b.appliedFiles(); len(got) != 1 || !slices.Equal(got[0], []string{"v2.yaml"}) {
		t.Errorf("applied %v, want [[v2.yaml]]", got)
	}
	finalFrame(t, tm)
}

// Refused by the engine (--observe): the reason flashes, no dialog.
func TestPlanApplyRefused(t *testing.T) {
	b := &applyBackend{planBackend: &planBackend{fakeBackend: newFake(fixture())},
		refuse: errors.New("not applying the graph: kroscope runs read-only (--observe)")}
	tm := newTeatest(t, b, Options{ConfigPath: "-", Theme: "dark"}, 160, 40)
	runCommand(tm, "plan v2.yaml")
	eventually(t, "the blast radius", func() bool { return strings.Contains(tmFrame(t, tm), "Plan of v2.yaml") })
	send(tm, "a")
	eventually(t, "the refusal", func() bool { return strings.Contains(tmFrame(t, tm), "kroscope runs read-only (--observe)") })
	if f := tmFrame(t, tm); strings.Contains(f, "Apply graph") {
		t.Errorf("a refused apply still asks:\n%s", f)
	}
	send(tm, "enter", "right", "enter")
	if got := b.appliedFiles(); len(got) != 0 {
		t.Errorf("refused, yet applied %v", got)
	}
	finalFrame(t, tm)
}

// While a rollout runs, the instance list's summary line shows its
// progress and the failing instances come first; without one, neither.
func TestInstanceListRollout(t *testing.T) {
	snap := fixture()
	b := newFake(snap)
	tm := newTeatest(t, b, Options{ConfigPath: "-", Theme: "dark"}, 160, 40)
	eventually(t, "the list", func() bool {
		return strings.Contains(tmFrame(t, tm), "team-a/shop") || strings.Contains(tmFrame(t, tm), "shop")
	})
	f := tmFrame(t, tm)
	if strings.Contains(f, "updated ") {
		t.Errorf("no rollout, yet progress shows:\n%s", f)
	}
	if strings.Index(f, "api") < strings.Index(f, "shop") {
		t.Fatalf("the fixture's failing instance already sorts first, the test shows nothing:\n%s", f)
	}
	rolling := fixture()
	rolling.Version++
	for i := range rolling.Graphs {
		if rolling.Graphs[i].Name == "webapp" {
			rolling.Graphs[i].Status.Rollout = state.Rollout{Serving: 2, Updated: 1, Failed: 1, Total: 3}
		}
	}
	b.set(rolling)
	eventually(t, "the progress", func() bool { return strings.Contains(tmFrame(t, tm), "webapp: updated 1/3, 1 failed") })
	f = tmFrame(t, tm)
	if strings.Index(f, "api") > strings.Index(f, "shop") {
		t.Errorf("during the rollout the failing instance is not first:\n%s", f)
	}
	finalFrame(t, tm)
}
