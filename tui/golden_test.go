package tui

import (
	"strings"
	"testing"
	"time"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/kroscope/kroscope/engine/state"
)

// newTestModel builds a model over the fixture with a pinned clock, theme
// and no config file.
func newTestModel(t testing.TB, snap *state.Snapshot, o Options, w, h int) (*Model, *fakeBackend) {
	t.Helper()
	f := newFake(snap)
	if o.Theme == "" {
		o.Theme = "dark"
	}
	o.ConfigPath = "-"
	o.Now = func() time.Time { return fixedNow }
	m := newModel(f, o)
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m, f
}

func press(m *Model, keys ...string) {
	for _, k := range keys {
		m.Update(keyMsg(k))
	}
}

// keyPresses are the presses Bubble Tea sends for the keys that have names.
var keyPresses = map[string]tea.KeyPressMsg{
	"enter": {Code: tea.KeyEnter}, "esc": {Code: tea.KeyEscape},
	"tab": {Code: tea.KeyTab}, "shift+tab": {Code: tea.KeyTab, Mod: tea.ModShift},
	"pgdown": {Code: tea.KeyPgDown}, "pgup": {Code: tea.KeyPgUp}, "f5": {Code: tea.KeyF5},
	"down": {Code: tea.KeyDown}, "up": {Code: tea.KeyUp}, "left": {Code: tea.KeyLeft}, "right": {Code: tea.KeyRight},
	"backspace": {Code: tea.KeyBackspace},
}

// keyMsg turns "j", "enter", "ctrl+d" into the key press Bubble Tea sends.
func keyMsg(s string) tea.KeyPressMsg {
	if k, ok := keyPresses[s]; ok {
		return k
	}
	if c, ok := strings.CutPrefix(s, "ctrl+"); ok {
		return tea.KeyPressMsg{Code: rune(c[0]), Mod: tea.ModCtrl}
	}
	r := []rune(s)[0]
	return tea.KeyPressMsg{Code: r, Text: s}
}

// plain strips styling and trailing spaces so goldens read as the screen.
func plain(s string) string {
	ls := strings.Split(ansi.Strip(s), "\n")
	for i, l := range ls {
		ls[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(ls, "\n") + "\n"
}

type screenCase struct {
	name  string
	w, h  int
	opts  Options
	snap  func() *state.Snapshot
	keys  []string
	check func(t *testing.T, raw string)
}

func screens() []screenCase {
	errSnap := func() *state.Snapshot {
		s := fixture()
		s.Watches = append([]state.Watch(nil), s.Watches...)
		s.Watches[2] = state.Watch{Name: "deployments.apps", Synced: true, Healthy: false, Err: "connection refused", Since: at(-40)}
		s.Mode = state.Mode{Reconciling: false, Holder: "ci-runner-7"}
		return s
	}
	startup := func() *state.Snapshot {
		s := fixture()
		s.Startup = state.Startup{Phase: "syncing watches", Step: 7, Total: 12}
		s.Watches = []state.Watch{{Name: "deployments.apps", Synced: true, Healthy: true}, {Name: "services", Synced: false, Healthy: true}, {Name: "webapps.kro.run", Synced: false, Healthy: true}}
		return s
	}
	fatal := func() *state.Snapshot {
		s := fixture()
		s.Fatal = &state.Fatal{Title: "Cannot reach the API server",
			Cause: `Get "https://127.0.0.1:6443/version": dial tcp 127.0.0.1:6443: connect: connection refused`,
			Hint:  "Check that the cluster is running (kind get clusters) and that --context names it; or try kroscope --demo."}
		return s
	}
	return []screenCase{
		{name: "instances_80x24", w: 80, h: 24},
		{name: "instances_160x48", w: 160, h: 48},
		{name: "instances_sorted_state_160x48", w: 160, h: 48, keys: []string{"s"}},
		{name: "instances_sorted_state_reversed_160x48", w: 160, h: 48, keys: []string{"S", "S"}},
		{name: "instances_220x60", w: 220, h: 60},
		{name: "filter_typing_80x24", w: 80, h: 24, keys: []string{"/"}},
		{name: "instance_220x60", w: 220, h: 60, keys: []string{"j", "enter", "j", "j", "j", "j"}},
		{name: "waiting_220x60", w: 220, h: 60, keys: []string{"enter", "j", "j"}},
		{name: "waiting_short_states_100x30", w: 100, h: 30, keys: []string{"enter", "j", "j"}},
		{name: "help_220x60", w: 220, h: 60, keys: []string{"?"}},
		{name: "help_instance_160x48", w: 160, h: 48, keys: []string{"enter", "?"}},
		{name: "delete_dialog_220x60", w: 220, h: 60, keys: []string{"j", "ctrl+d"}},
		{name: "instances_logs_160x48", w: 160, h: 48, keys: []string{"L"}},
		{name: "filter_state_error_80x24", w: 80, h: 24, keys: []string{"/", "s", "t", "a", "t", "e", ":", "e", "r", "r", "o", "r", "enter"}},
		{name: "help_80x24", w: 80, h: 24, keys: []string{"?"}},
		{name: "help_160x48", w: 160, h: 48, keys: []string{"?"}},
		{name: "instance_80x24", w: 80, h: 24, keys: []string{"j", "enter"}},
		{name: "instance_160x48", w: 160, h: 48, keys: []string{"j", "enter", "j", "j"}},
		{name: "instance_detail_80x24", w: 80, h: 24, keys: []string{"j", "enter", "j", "j", "enter"}},
		{name: "error_80x24", w: 80, h: 24, keys: []string{"e"}},
		{name: "error_160x48", w: 160, h: 48, keys: []string{"e"}},
		{name: "waiting_160x48", w: 160, h: 48, keys: []string{"enter", "j", "j"}},
		{name: "layers_160x48", w: 160, h: 48, keys: []string{"enter", "g", "j", "j"}},
		{name: "layers_ascii_100x30", w: 100, h: 30, opts: Options{ASCII: true}, keys: []string{"enter", "g"}, check: onlyASCII},
		{name: "readywhen_values_160x48", w: 160, h: 48, snap: twoConditions, keys: []string{"enter", "j", "j"}},
		{name: "readywhen_values_80x24", w: 80, h: 24, snap: twoConditions, keys: []string{"enter", "j", "j"}},
		{name: "readywhen_values_220x60", w: 220, h: 60, snap: twoConditions, keys: []string{"enter", "j", "j"}},
		{name: "yaml_desired_secret_masked_160x48", w: 160, h: 48, keys: []string{"j", "enter", "j", "y"}},
		{name: "yaml_observed_secret_revealed_160x48", w: 160, h: 48, keys: []string{"j", "enter", "j", "y", "y", "x", "right", "enter"}},
		{name: "yaml_diff_160x48", w: 160, h: 48, keys: []string{"j", "enter", "j", "j", "y", "y", "y"}},
		{name: "history_160x48", w: 160, h: 48, keys: []string{"j", "enter", "H"}},
		{name: "timeline_160x48", w: 160, h: 48, keys: []string{"j", "enter", "t"}},
		{name: "timeline_80x24", w: 80, h: 24, keys: []string{"j", "enter", "t"}},
		{name: "delete_dialog_80x24", w: 80, h: 24, keys: []string{"j", "ctrl+d"}},
		{name: "delete_dialog_external_160x48", w: 160, h: 48, keys: []string{"j", "j", "j", "ctrl+d"}},
		{name: "watch_lost_observing_160x48", w: 160, h: 48, snap: errSnap},
		{name: "watch_lost_80x24", w: 80, h: 24, snap: errSnap},
		{name: "startup_80x24", w: 80, h: 24, snap: startup},
		{name: "startup_160x48", w: 160, h: 48, snap: startup},
		{name: "startup_220x60", w: 220, h: 60, snap: startup},
		{name: "idle_instances_160x48", w: 160, h: 48, snap: func() *state.Snapshot {
			s := fixture()
			s.Engine.QueueDepth, s.Engine.BusyWorkers, s.Engine.ReconcilesPerSecond = 0, 0, 0
			return s
		}},
		{name: "fatal_80x24", w: 80, h: 24, snap: fatal},
		{name: "fatal_160x48", w: 160, h: 48, snap: fatal},
		{name: "nocolor_instances_80x24", w: 80, h: 24, opts: Options{NoColor: true}, check: noColour},
		{name: "nocolor_instance_160x48", w: 160, h: 48, opts: Options{NoColor: true}, keys: []string{"e"}, check: noColour},
		{name: "ascii_instances_80x24", w: 80, h: 24, opts: Options{ASCII: true}, check: onlyASCII},
		{name: "ascii_instance_160x48", w: 160, h: 48, opts: Options{ASCII: true}, keys: []string{"j", "enter", "t"}, check: onlyASCII},
		{name: "ascii_dialog_80x24", w: 80, h: 24, opts: Options{ASCII: true}, keys: []string{"j", "ctrl+d"}, check: onlyASCII},
		{name: "ascii_startup_80x24", w: 80, h: 24, opts: Options{ASCII: true}, snap: startup, check: onlyASCII},
		{name: "highcontrast_instance_80x24", w: 80, h: 24, opts: Options{Theme: "high-contrast"}, keys: []string{"e"}},
		{name: "light_instances_80x24", w: 80, h: 24, opts: Options{Theme: "light"}},
		{name: "deep_graph_80x24", w: 80, h: 24, snap: func() *state.Snapshot { return bigInstance(40) }, keys: []string{"j", "enter", "G"}},
		{name: "deep_graph_error_160x48", w: 160, h: 48, snap: func() *state.Snapshot { return bigInstance(40) }, keys: []string{"e"}},
	}
}

func noColour(t *testing.T, raw string) {
	t.Helper()
	// SGR colour parameters: 30-37, 38;..., 40-47, 48;..., 90-97, 100-107.
	for _, seq := range []string{"[38;", "[48;", ";38;", ";48;"} {
		if strings.Contains(raw, seq) {
			t.Errorf("NO_COLOR output contains colour sequence %q", seq)
		}
	}
}

func onlyASCII(t *testing.T, raw string) {
	t.Helper()
	for i, r := range ansi.Strip(raw) {
		if r > unicode.MaxASCII {
			t.Fatalf("--ascii output has %q at byte %d", r, i)
		}
	}
}

// TestGolden renders every screen at fixed sizes with a pinned clock and
// theme. Goldens hold the text (ANSI stripped); TestGoldenColour keeps the
// escape codes of a few screens. Refresh with go test ./tui -update.
func TestGolden(t *testing.T) {
	for _, c := range screens() {
		t.Run(c.name, func(t *testing.T) {
			snap := fixture
			if c.snap != nil {
				snap = c.snap
			}
			m, _ := newTestModel(t, snap(), c.opts, c.w, c.h)
			press(m, c.keys...)
			raw := m.View().Content
			if c.check != nil {
				c.check(t, raw)
			}
			out := plain(raw)
			for i, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				if w := ansi.StringWidth(l); w > c.w {
					t.Errorf("line %d is %d cells wide, terminal is %d: %q", i, w, c.w, l)
				}
			}
			if n := strings.Count(out, "\n"); n > c.h {
				t.Errorf("frame has %d lines, terminal has %d", n, c.h)
			}
			golden.RequireEqual(t, out)
		})
	}
}

// TestGoldenColour pins the styled output (true-colour dark theme and the
// NO_COLOR variant, which may only use bold and reverse video).
func TestGoldenColour(t *testing.T) {
	for _, c := range []screenCase{
		{name: "dark_instances_80x24", w: 80, h: 24},
		{name: "dark_instance_error_80x24", w: 80, h: 24, keys: []string{"e"}}, // tab would clear the flash: another view
		{name: "nocolor_instances_80x24", w: 80, h: 24, opts: Options{NoColor: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, _ := newTestModel(t, fixture(), c.opts, c.w, c.h)
			press(m, c.keys...)
			golden.RequireEqual(t, m.View().Content)
		})
	}
}

// pressRun presses keys and runs the commands they return, feeding back
// their results (resultMsg): for actions that call the engine off the UI
// loop. Other commands (ticks) are not waited for.
func pressRun(t *testing.T, m *Model, keys ...string) {
	t.Helper()
	for _, k := range keys {
		_, cmd := m.Update(keyMsg(k))
		runResults(t, m, cmd)
	}
}

func runResults(t *testing.T, m *Model, cmd tea.Cmd) {
	t.Helper()
	// Slower than 200ms is a tick: not an action's result.
	feedBack(m, cmd, 200*time.Millisecond, false, func(msg tea.Msg) bool { _, ok := msg.(resultMsg); return ok })
}

// feedBack runs cmd, and each command of a batch, as the program would, and
// gives m each message wanted takes; with chain, it feeds on what that
// Update returns. Other messages (timers, waits) are dropped, and so is
// a command slower than wait.
func feedBack(m *Model, cmd tea.Cmd, wait time.Duration, chain bool, wanted func(tea.Msg) bool) {
	if cmd == nil {
		return
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	select {
	case msg := <-done:
		if batch, ok := msg.(tea.BatchMsg); ok {
			for _, c := range batch {
				feedBack(m, c, wait, chain, wanted)
			}
		} else if wanted(msg) {
			if _, next := m.Update(msg); chain {
				feedBack(m, next, wait, chain, wanted)
			}
		}
	case <-time.After(wait):
	}
}

// listOf is the instance list, always at the bottom of the stack.
func listOf(m *Model) *instancesScreen { return m.stack[0].(*instancesScreen) }

// detailOf is the open instance screen, or nil.
func detailOf(m *Model) *instanceScreen {
	s, _ := m.stack.base().(*instanceScreen)
	return s
}
