package tui

import (
	"strings"
	"testing"

	"github.com/kroscope/kroscope/engine/state"
)

// The header's activity and watches are one decision each, from the
// engine's figures: a rollout reads as reconciling, a quiet engine as
// idle, and at 80 columns the figures are words, not "q 0 │ 0.0/s" that
// reads like a key hint.
func TestHeaderActivity(t *testing.T) {
	for _, c := range []struct {
		name   string
		e      state.Engine
		detail int
		want   string
	}{
		{"quiet", state.Engine{Workers: 4}, activityWord, "idle"},
		{"quiet narrow", state.Engine{Workers: 4}, activityQueue, "idle"},
		{"a reconcile since the last figures", state.Engine{Workers: 4, BusyWorkers: 1, ReconcilesPerSecond: 16}, activityWord, "reconciling"},
		{"rollout narrow", state.Engine{Workers: 4, BusyWorkers: 4, ReconcilesPerSecond: 16}, activityQueue, "reconciling 16.0 rec/s"},
		{"queued narrow", state.Engine{Workers: 4, QueueDepth: 3, ReconcilesPerSecond: 2}, activityQueue, "reconciling 2.0 rec/s, 3 queued"},
		{"queued, no room", state.Engine{Workers: 4, QueueDepth: 3, ReconcilesPerSecond: 2}, activityRate, "reconciling 2.0 rec/s"},
		{"rate dying out", state.Engine{Workers: 4, ReconcilesPerSecond: 0.4}, activityQueue, "idle"},
	} {
		if got := activity(c.e, c.detail); got != c.want {
			t.Errorf("%s: activity = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestHeaderWatches(t *testing.T) {
	ok := state.Watch{Synced: true, Healthy: true}
	listing := state.Watch{Healthy: true}
	broken := state.Watch{Synced: true}
	denied := state.Watch{Forbidden: true}
	for _, c := range []struct {
		name  string
		ws    []state.Watch
		want  string
		alarm bool
	}{
		{"all synced", []state.Watch{ok, ok}, "watches 2/2", false},
		{"listing", []state.Watch{listing, listing, ok}, "watches 1/3 synced", false},
		{"one broken", []state.Watch{ok, broken, listing}, "watches 2/3 healthy, 2/3 synced", true},
		{"no access", []state.Watch{ok, denied}, "watches 1/1 (1 no access)", false},
	} {
		got, alarm := watchSummary(c.ws)
		if got != c.want || alarm != c.alarm {
			t.Errorf("%s: watchSummary = %q, %v; want %q, %v", c.name, got, alarm, c.want, c.alarm)
		}
	}
}

// The header at 80 columns during a rollout: reconciling, in words.
func TestHeaderAt80DuringRollout(t *testing.T) {
	snap := fixture()
	snap.Engine = state.Engine{Workers: 4, BusyWorkers: 4, QueueDepth: 0, ReconcilesPerSecond: 16}
	snap.Watches = []state.Watch{{Name: "a", Healthy: true}, {Name: "b", Healthy: true, Synced: true}}
	m, _ := newTestModel(t, snap, Options{}, 80, 24)
	head := strings.SplitN(plain(m.View().Content), "\n", 2)[0]
	for _, want := range []string{"reconciling 16.0 rec/s", "watches 1/2 synced"} {
		if !strings.Contains(head, want) {
			t.Errorf("header %q lacks %q", head, want)
		}
	}
	for _, bad := range []string{"q 0", "0.0/s", "idle", "syncing"} {
		if strings.Contains(head, bad) {
			t.Errorf("header %q says %q", head, bad)
		}
	}
}

// The wide header's rate column follows the same rule as the narrow
// header's words: shown while reconciling, gone once idle (it read
// "● idle │ queue 0 │ 0.2 rec/s", the rate being over the last seconds).
func TestWideHeaderRateOnlyWhileReconciling(t *testing.T) {
	for _, c := range []struct {
		e    state.Engine
		rate bool
	}{
		{state.Engine{Workers: 4, BusyWorkers: 2, ReconcilesPerSecond: 16}, true},
		{state.Engine{Workers: 4, ReconcilesPerSecond: 0.2}, false},
		{state.Engine{Workers: 4}, false},
	} {
		snap := fixture()
		snap.Engine = c.e
		m, _ := newTestModel(t, snap, Options{}, 200, 50)
		head := strings.SplitN(plain(m.View().Content), "\n", 2)[0]
		if strings.Contains(head, "rec/s") != c.rate || !strings.Contains(head, "queue 0") {
			t.Errorf("%+v: header %q, want the rate shown %v", c.e, head, c.rate)
		}
	}
}

// kindTerm is the one rule for a kind: term, which the filter and the
// header's spelling both ask.
func TestKindTerm(t *testing.T) {
	for _, c := range []struct {
		term, kind, resource string
		want                 bool
	}{
		{"webapp", "WebApp", "webapps.kro.run", true},
		{"webapps", "WebApp", "webapps.kro.run", true},
		{"webapps.kro.run", "WebApp", "webapps.kro.run", true},
		{"web", "WebApp", "webapps.kro.run", true},
		{"app", "WebApp", "webapps.kro.run", false},
		{"webapp", "Pipeline", "pipelines.kro.run", false},
	} {
		if got := kindTerm(c.term, c.kind, c.resource); got != c.want {
			t.Errorf("kindTerm(%q, %q, %q) = %v, want %v", c.term, c.kind, c.resource, got, c.want)
		}
	}
}
