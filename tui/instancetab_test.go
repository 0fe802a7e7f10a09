package tui

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/kroscope/kroscope/engine/state"
)

// detailBackend is the fake with the engine's InstanceDetail.
type detailBackend struct {
	*fakeBackend
	reads atomic.Int64
}

func (d *detailBackend) InstanceDetail(_ context.Context, key state.InstanceKey) (state.InstanceDetail, error) {
	d.reads.Add(1)
	return shopDetail(key), nil
}

func shopDetail(key state.InstanceKey) state.InstanceDetail {
	return state.InstanceDetail{Key: key, At: fixedNow,
		Object: map[string]any{"apiVersion": "kro.run/v1alpha1", "kind": "WebApp",
			"metadata": map[string]any{"name": key.Name, "namespace": key.Namespace, "generation": int64(3)},
			"spec":     map[string]any{"image": "nginx:1.27", "replicas": int64(2)},
			"status": map[string]any{"state": "ACTIVE", "url": "http://shop.team-a",
				"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}},
		Conditions: []state.Condition{
			{Type: "InstanceManaged", Status: "True", Reason: "Managed", Message: "instance is managed", LastTransition: at(-3 * 3600), ObservedGeneration: 3},
			{Type: "ResourcesReady", Status: "True", Reason: "AllResourcesReady", Message: "all resources are ready", LastTransition: at(-94), ObservedGeneration: 3},
			{Type: "Ready", Status: "True", Reason: "Ready", LastTransition: at(-94), ObservedGeneration: 3},
		},
		Events: []state.Event{
			{Type: "Warning", Reason: "ApplyFailed", Message: "deployment: the server has a 500", Source: "kroscope", Count: 3, Last: at(-30)},
			{Type: "Normal", Reason: "Created", Message: "created deployment team-a/shop", Source: "kroscope", Count: 1, Last: at(-120)},
		},
	}
}

// "The instance custom resource itself (its spec, status, conditions,
// Events) cannot be seen": i shows them with the children, y its YAML.
func TestNewUserInstancePaneShowsTheInstance(t *testing.T) {
	b := &detailBackend{fakeBackend: newFake(only(fixture(), "shop"))}
	o := Options{ConfigPath: "-", Theme: "dark", Now: func() time.Time { return fixedNow }}
	tm := newTeatest(t, b, o, 200, 60)
	send(tm, "enter", "i")
	var out string
	eventually(t, "the instance pane", func() bool { out = tmFrame(t, tm); return strings.Contains(out, "EVENTS (newest first)") })
	for _, want := range []string{"SPEC", "image: nginx:1.27", "STATUS", "url: http://shop.team-a", "CONDITIONS",
		"ResourcesReady", "AllResourcesReady", "ApplyFailed", "(x3) deployment: the server has a 500", "INVENTORY", "shop-config"} {
		if !strings.Contains(out, want) {
			t.Fatalf("instance pane lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "ApplyFailed") > strings.Index(out, "created deployment") {
		t.Fatalf("Events are not newest first:\n%s", out)
	}
	send(tm, "y")
	eventually(t, "the instance YAML", func() bool { out = tmFrame(t, tm); return strings.Contains(out, "kind: WebApp") })
	if !strings.Contains(out, "apiVersion: kro.run/v1alpha1") {
		t.Fatalf("no instance YAML:\n%s", out)
	}
	finalFrame(t, tm)
}

// The pane reads through the backend only while it shows, and again when
// the instance changes.
func TestInstancePaneReadsOnlyWhileShown(t *testing.T) {
	b := &detailBackend{fakeBackend: newFake(only(fixture(), "shop"))}
	m := newModel(b, Options{ConfigPath: "-", Theme: "dark", Now: func() time.Time { return fixedNow }})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	run := func(keys ...string) {
		for _, k := range keys {
			_, cmd := m.Update(keyMsg(k))
			drain(m, cmd)
		}
	}
	run("enter", "j", "t")
	if n := b.reads.Load(); n != 0 {
		t.Fatalf("%d reads while the Instance tab was not shown", n)
	}
	run("i")
	if n := b.reads.Load(); n != 1 {
		t.Fatalf("%d reads after i, want 1", n)
	}
	run("j", "k")
	if n := b.reads.Load(); n != 1 {
		t.Fatalf("%d reads, want no new one while nothing changed", n)
	}
	s := only(fixture(), "shop")
	s.Instances[0].Version++
	b.set(s)
	_, cmd := m.Update(flushMsg{})
	drain(m, cmd)
	if n := b.reads.Load(); n != 2 {
		t.Fatalf("%d reads after the instance changed, want 2", n)
	}
}

func newTeatest(t *testing.T, b Backend, o Options, w, h int) *teatest.TestModel {
	t.Helper()
	tm := teatest.NewTestModel(t, NewModel(b, o), teatest.WithInitialTermSize(w, h), progOpts())
	t.Cleanup(func() { _ = tm.Quit() })
	return tm
}

// drain runs the commands an Update returned, feeding back what the
// instance read returns (other commands are timers and waits: dropped).
func drain(m *Model, cmd tea.Cmd) {
	feedBack(m, cmd, 50*time.Millisecond, true, func(msg tea.Msg) bool { _, ok := msg.(instanceDetailMsg); return ok })
}

// TestInstancePaneGolden pins the Instance tab at three sizes.
func TestInstancePaneGolden(t *testing.T) {
	for _, c := range []struct {
		name string
		w, h int
		keys []string
	}{
		{"instance_pane_200x60", 200, 60, []string{"enter", "i"}},
		{"instance_pane_100x40", 100, 40, []string{"enter", "i"}},
		{"instance_pane_yaml_160x48", 160, 48, []string{"enter", "i", "y"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := &detailBackend{fakeBackend: newFake(only(fixture(), "shop"))}
			m := newModel(b, Options{ConfigPath: "-", Theme: "dark", Now: func() time.Time { return fixedNow }})
			m.Update(tea.WindowSizeMsg{Width: c.w, Height: c.h})
			for _, k := range c.keys {
				_, cmd := m.Update(keyMsg(k))
				drain(m, cmd)
			}
			golden.RequireEqual(t, plain(m.View().Content))
		})
	}
}

// TestYAMLKeyShowsTheSelectedInstance: y on the list showed the first
// child's YAML, not the selected instance's; and y on the instance pane
// kept the previous scroll offset. y opens the instance's own YAML, at
// the top, and y there goes back to its summary at the top.
func TestYAMLKeyShowsTheSelectedInstance(t *testing.T) {
	b := &detailBackend{fakeBackend: newFake(fixture())}
	m := newModel(b, Options{ConfigPath: "-", Theme: "dark", Now: func() time.Time { return fixedNow }})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	for _, k := range []string{"j", "y"} { // team-a/shop
		_, cmd := m.Update(keyMsg(k))
		drain(m, cmd)
	}
	out := plain(m.View().Content)
	if !strings.Contains(out, "kind: WebApp") || !strings.Contains(out, "name: shop") || strings.Contains(out, "LOG_LEVEL") {
		t.Fatalf("y on shop's row:\n%s", out)
	}
	for _, k := range []string{"J", "J", "J", "y"} {
		_, cmd := m.Update(keyMsg(k))
		drain(m, cmd)
	}
	if off := m.stack.top().(*instanceScreen).detail.vp.YOffset(); off != 0 {
		t.Errorf("y on the instance pane kept the scroll offset %d", off)
	}
}
