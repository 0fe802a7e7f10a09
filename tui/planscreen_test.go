package tui

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/kroscope/kroscope/plan"
)

// planBackend is the fake with the engine's Plan: it answers a fixed plan
// and remembers the files asked for.
type planBackend struct {
	*fakeBackend
	mu    sync.Mutex
	asked [][]string
}

func (p *planBackend) Plan(_ context.Context, paths ...string) ([]*plan.Plan, error) {
	p.mu.Lock()
	p.asked = append(p.asked, paths)
	p.mu.Unlock()
	return []*plan.Plan{{Graph: "webapp", Kind: "WebApp", Instances: []plan.Instance{
		{Namespace: "team-a", Name: "calm"},
		{Namespace: "team-a", Name: "busy", Objects: []plan.Object{
			{Resource: "config", Kind: "ConfigMap", Namespace: "team-a", Name: "busy-config", Op: plan.OpChange,
				Fields: []plan.Field{{Path: "data.GREETING", Op: "~", Old: "hi", New: "hello"}}},
			{Resource: "ingress", Kind: "Ingress", Namespace: "team-a", Name: "busy", Op: plan.OpPrune}}},
		{Namespace: "team-a", Name: "broken", Objects: []plan.Object{
			{Kind: "WebApp", Namespace: "team-a", Name: "broken", Op: plan.OpFail, Message: "the new schema refuses it"}}},
	}}}, nil
}

// :plan FILE asks the engine to plan the file and shows the blast radius,
// failures first, then the most changed; enter shows one instance's diff,
// esc goes back to the list and then to the instances.
func TestPlanBlastRadius(t *testing.T) {
	b := &planBackend{fakeBackend: newFake(fixture())}
	tm := newTeatest(t, b, Options{ConfigPath: "-", Theme: "dark"}, 160, 40)
	runCommand(tm, "plan v2.yaml")
	eventually(t, "the blast radius", func() bool { return strings.Contains(tmFrame(t, tm), "Plan of v2.yaml") })
	frame := tmFrame(t, tm)
	broken, busy, calm := strings.Index(frame, "team-a/broken"), strings.Index(frame, "team-a/busy"), strings.Index(frame, "team-a/calm")
	if broken < 0 || busy < broken || calm < busy {
		t.Fatalf("rows not failures first, then the most changed:\n%s", frame)
	}
	if !strings.Contains(frame, "Plan: 0 to create, 1 to change, 1 to prune, across 3 instances; 1 would fail.") {
		t.Errorf("no summary line:\n%s", frame)
	}
	send(tm, "j", "enter")
	eventually(t, "busy's diff", func() bool {
		f := tmFrame(t, tm)
		return strings.Contains(f, `~ data.GREETING: "hi" -> "hello"`) && strings.Contains(f, "- Ingress team-a/busy (ingress)")
	})
	send(tm, "esc")
	eventually(t, "the list again", func() bool { return strings.Contains(tmFrame(t, tm), "CREATE") })
	send(tm, "esc")
	eventually(t, "the instances", func() bool { return !strings.Contains(tmFrame(t, tm), "CREATE") })
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.asked) != 1 || len(b.asked[0]) != 1 || b.asked[0][0] != "v2.yaml" {
		t.Errorf("the engine was asked to plan %v, want [v2.yaml]", b.asked)
	}
	finalFrame(t, tm)
}

// schemaPlanBackend answers planBackend's plan with a breaking CRD change.
type schemaPlanBackend struct{ *planBackend }

func (p schemaPlanBackend) Plan(ctx context.Context, paths ...string) ([]*plan.Plan, error) {
	plans, err := p.planBackend.Plan(ctx, paths...)
	plans[0].Schema = &plan.Schema{CRD: "webapps.kro.run", Breaking: []string{"spec.replicas: maximum lowered from 20 to 2"}}
	return plans, err
}

// At 100 columns the summary line is whole (beside a long file name it was
// cut without an ellipsis), and an instance's diff says the graph's CRD
// change (it said "schema: not compared (this user may not read CRDs)",
// which was not true).
func TestPlanViewSaysTheSchemaAndFits(t *testing.T) {
	b := schemaPlanBackend{&planBackend{fakeBackend: newFake(fixture())}}
	tm := newTeatest(t, b, Options{ConfigPath: "-", Theme: "dark"}, 100, 30)
	runCommand(tm, "plan test/plan/testdata/webapp-v2.yaml")
	eventually(t, "the blast radius", func() bool { return strings.Contains(tmFrame(t, tm), "CREATE") })
	f := tmFrame(t, tm)
	if !strings.Contains(f, "Plan: 0 to create, 1 to change, 1 to prune, across 3 instances; 2 would fail.") {
		t.Errorf("no whole summary line:\n%s", f)
	}
	for _, l := range strings.Split(f, "\n") {
		if w := ansi.StringWidth(l); w > 100 {
			t.Errorf("a line of %d cells at 100 columns (the terminal cuts it, no ellipsis): %q", w, l)
		}
	}
	send(tm, "j", "enter") // the first row is the CRD's
	eventually(t, "broken's diff", func() bool { return strings.Contains(tmFrame(t, tm), "the new schema refuses it") })
	f = tmFrame(t, tm)
	if strings.Contains(f, "not compared") || !strings.Contains(f, "! CRD webapps.kro.run: breaking schema change") {
		t.Errorf("the instance's diff does not say the CRD change:\n%s", f)
	}
	finalFrame(t, tm)
}
