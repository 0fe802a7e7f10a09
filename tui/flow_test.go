package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/kroscope/kroscope/engine/state"
)

// startFlow runs the real program (teatest) over the fixture.
func startFlow(t *testing.T, o Options) (*teatest.TestModel, *fakeBackend) {
	t.Helper()
	f := newFake(fixture())
	if o.ConfigPath == "" {
		o.ConfigPath = "-"
	}
	o.Theme = "dark"
	o.Now = func() time.Time { return fixedNow }
	m := NewModel(f, o)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30), progOpts())
	t.Cleanup(func() { _ = tm.Quit() })
	return tm, f
}

func send(tm *teatest.TestModel, keys ...string) {
	for _, k := range keys {
		tm.Send(keyMsg(k))
	}
}

// runCommand types :line on tm and presses enter, as a user would.
func runCommand(tm *teatest.TestModel, line string) {
	send(tm, ":")
	for _, r := range line {
		send(tm, string(r))
	}
	send(tm, "enter")
}

// finalFrame quits and returns the last frame, ANSI stripped.
func finalFrame(t *testing.T, tm *teatest.TestModel) string {
	t.Helper()
	// Snapshot the frame from inside the program's loop before quitting.
	frame := make(chan string, 1)
	tm.Send(FrameRequest{frame})
	var s string
	select {
	case s = <-frame:
	case <-time.After(10 * time.Second):
		t.Fatal("no frame from the program")
	}
	send(tm, "ctrl+c")
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	return plain(s)
}

// eventually polls cond: the program runs on its own goroutine.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestFlowRequeueSelected(t *testing.T) {
	tm, f := startFlow(t, Options{})
	send(tm, "j", "r") // second row: team-a/shop
	want := state.InstanceKey{Resource: webapps, Namespace: "team-a", Name: "shop"}
	eventually(t, "Requeue", func() bool { r, _, _ := f.calls(); return len(r) == 1 })
	if r, _, _ := f.calls(); r[0] != want {
		t.Fatalf("requeued %v, want %v", r[0], want)
	}
	if out := finalFrame(t, tm); !strings.Contains(out, "requeued team-a/shop") {
		t.Fatalf("flash line missing:\n%s", out)
	}
}

func TestFlowRequeueAllShown(t *testing.T) {
	tm, f := startFlow(t, Options{})
	tm.Type("/kind:database")
	send(tm, "enter", "R")
	eventually(t, "RequeueAll", func() bool { _, n, _ := f.calls(); return n > 0 })
	if _, n, _ := f.calls(); n != 2 {
		t.Fatalf("RequeueAll matched %d instances, want the 2 shown", n)
	}
	if out := finalFrame(t, tm); !strings.Contains(out, "requeued 2 instances") {
		t.Fatalf("flash line missing:\n%s", out)
	}
}

func TestFlowDeleteCancelCallsNothing(t *testing.T) {
	tm, f := startFlow(t, Options{})
	send(tm, "j", "ctrl+d")
	// Enter on the default button is Cancel.
	send(tm, "enter")
	out := finalFrame(t, tm)
	if _, _, d := f.calls(); len(d) != 0 {
		t.Fatalf("Delete called after Cancel: %v", d)
	}
	if !strings.Contains(out, "cancelled") {
		t.Fatalf("no flash after cancel:\n%s", out)
	}
}

func TestFlowDeleteEscCallsNothing(t *testing.T) {
	tm, f := startFlow(t, Options{})
	send(tm, "j", "ctrl+d", "right", "esc")
	finalFrame(t, tm)
	if _, _, d := f.calls(); len(d) != 0 {
		t.Fatalf("Delete called after esc: %v", d)
	}
}

func TestFlowDeleteConfirm(t *testing.T) {
	tm, f := startFlow(t, Options{})
	send(tm, "j", "ctrl+d", "right", "enter")
	want := state.InstanceKey{Resource: webapps, Namespace: "team-a", Name: "shop"}
	eventually(t, "Delete", func() bool { _, _, d := f.calls(); return len(d) == 1 })
	if _, _, d := f.calls(); d[0] != want {
		t.Fatalf("deleted %v, want %v", d[0], want)
	}
	eventually(t, "the result flash", func() bool { return strings.Contains(tmFrame(t, tm), "deleted team-a/shop") })
	finalFrame(t, tm)
}

func TestFlowErrorKeyShowsErrorText(t *testing.T) {
	tm, _ := startFlow(t, Options{})
	send(tm, "e")
	out := finalFrame(t, tm)
	words := strings.Join(strings.Fields(out), " ") // wrapped lines read on
	for _, want := range []string{"Error", `Deployment.apps "api" is`, "quantities must match", "Invalid value"} {
		if !strings.Contains(words, want) {
			t.Fatalf("missing %q after e:\n%s", want, out)
		}
	}
}

func TestFlowFilterNarrowsTable(t *testing.T) {
	tm, _ := startFlow(t, Options{})
	tm.Type("/ns:team-b")
	send(tm, "enter")
	out := finalFrame(t, tm)
	if !strings.Contains(out, "team-b/api") || !strings.Contains(out, "team-b/orders") {
		t.Fatalf("filtered table lost team-b rows:\n%s", out)
	}
	for _, gone := range []string{"team-a/shop", "team-a/blog", "team-c/"} {
		if strings.Contains(out, gone) {
			t.Fatalf("filter ns:team-b still shows %s:\n%s", gone, out)
		}
	}
	if !strings.Contains(out, "2/6 instances") {
		t.Fatalf("header does not count the filtered rows:\n%s", out)
	}
}

func TestFlowHelpShowsKeys(t *testing.T) {
	tm, _ := startFlow(t, Options{})
	send(tm, "?")
	var seen strings.Builder
	eventually(t, "the help", func() bool { f := tmFrame(t, tm); seen.WriteString(f); return strings.Contains(f, "Keys") })
	send(tm, "pgdown", "pgdown") // the rest of it, at 100x30
	out := finalFrame(t, tm)
	seen.WriteString(out)
	for _, want := range []string{"Keys", "requeue all shown", "ctrl+d", "next instance in error", "filter", "esc always goes back one level"} {
		if !strings.Contains(seen.String(), want) {
			t.Fatalf("help lacks %q:\n%s", want, seen.String())
		}
	}
}

func TestFlowRemappedKeyFromConfig(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "kroscope", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := "theme: high-contrast\nkeys:\n  requeue: [\"x\", \"F5\"]\n  reveal: [\"ctrl+r\"]\n"
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CONFIG_HOME", dir)
	if got := DefaultConfigPath(); got != path {
		t.Fatalf("DefaultConfigPath = %s, want %s", got, path)
	}
	f := newFake(fixture())
	m := NewModel(f, Options{Now: func() time.Time { return fixedNow }})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30), progOpts())
	send(tm, "r") // no longer bound
	send(tm, "x") // the new binding
	eventually(t, "Requeue by the remapped key", func() bool { r, _, _ := f.calls(); return len(r) > 0 })
	out := finalFrame(t, tm)
	if r, _, _ := f.calls(); len(r) != 1 || r[0].Name != "blog" {
		t.Fatalf("requeue calls = %v, want one for team-a/blog", r)
	}
	if !strings.Contains(out, "x/f5 requeue") {
		t.Fatalf("help line does not show the remapped key:\n%s", out)
	}
	if th := m.(*Model).c.th.Name; th != "high-contrast" {
		t.Fatalf("theme from config = %s", th)
	}
}

func TestBadConfigIsReportedNotFatal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte("keys:\n  explode: [\"z\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := NewModel(newFake(fixture()), Options{ConfigPath: path, Now: func() time.Time { return fixedNow }}).(*Model)
	if !m.flash.isErr || !strings.Contains(m.flash.text, path+":2:") || !strings.Contains(m.flash.text, "keys.explode") {
		t.Fatalf("flash = %q, want an error naming the file, the line and the field", m.flash.text)
	}
	// A bad --theme starts on auto and says so.
	m = newModel(newFake(fixture()), Options{Theme: "sepia", ConfigPath: "-"})
	if !strings.Contains(m.flash.text, `"sepia"`) || m.c.th.Name != "auto" {
		t.Fatalf("unknown theme: flash %q, theme %s", m.flash.text, m.c.th.Name)
	}
}

// TestFlowLiveUpdate: a change in the backend reaches the screen through
// Subscribe without any key press.
func TestFlowLiveUpdate(t *testing.T) {
	store := state.NewStore()
	store.SetStartup(state.Startup{Done: true})
	b := &storeBackend{Store: store}
	m := NewModel(b, Options{ConfigPath: "-", Theme: "dark"})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30), progOpts())
	key := state.InstanceKey{Resource: webapps, Namespace: "live", Name: "one"}
	store.UpdateInstance(key, func(in *state.Instance) {
		in.Kind, in.State = "WebApp", "IN_PROGRESS"
		in.Resources = []state.Resource{{ID: "deployment", Kind: "Deployment", State: "CREATED"}}
	})
	eventually(t, "the instance on screen", func() bool { return strings.Contains(tmFrame(t, tm), "live/one") })
	store.UpdateInstance(key, func(in *state.Instance) {
		in.State = "ACTIVE"
		in.Resources = []state.Resource{{ID: "deployment", Kind: "Deployment", State: "SYNCED"}}
	})
	eventually(t, "ACTIVE on screen", func() bool { return strings.Contains(tmFrame(t, tm), "ACTIVE") })
	finalFrame(t, tm)
}

func tmFrame(t *testing.T, tm *teatest.TestModel) string {
	ch := make(chan string, 1)
	tm.Send(FrameRequest{ch})
	select {
	case s := <-ch:
		return plain(s)
	case <-time.After(10 * time.Second):
		t.Fatal("no frame")
	}
	return ""
}

// storeBackend is a Backend over a real state.Store with no-op actions.
type storeBackend struct {
	*state.Store
	requeued []state.InstanceKey
}

func (s *storeBackend) Requeue(k state.InstanceKey) error {
	s.requeued = append(s.requeued, k)
	return nil
}

func (s *storeBackend) RequeueAll(match func(*state.Instance) bool) (int, error) {
	n := 0
	for _, in := range s.Snapshot().Instances {
		if match(in) {
			n++
		}
	}
	return n, nil
}

func (s *storeBackend) Delete(context.Context, state.InstanceKey) error { return nil }

func progOpts() teatest.TestOption {
	return teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii))
}

func mouseClick(x, y int) tea.MouseClickMsg {
	return tea.MouseClickMsg{X: x, Y: y, Button: tea.MouseLeft}
}
