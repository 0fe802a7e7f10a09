package tui

import (
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// The tour's findings (#27), each pinned: a key that does nothing on the
// graphs screens says why, as it does on the list and an instance.
func TestGraphsKeysThatDoNothingSayWhy(t *testing.T) {
	m := newModel(eventsBackend{newFake(graphsFixture(t))}, Options{Theme: "dark", ConfigPath: "-", Now: func() time.Time { return fixedNow }})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	for _, c := range []struct {
		keys []string
		want string
	}{
		{[]string{"D", "r"}, "r works on the instances (i lists them): requeue (skips the backoff)"},
		{[]string{"D", "Z"}, "Z does nothing here: ? lists"},
		{[]string{"D", "y"}, "y works on a graph (enter opens one): the definition's YAML"},
		{[]string{"D", "enter", "ctrl+d"}, "ctrl+d works on the instances (i lists them): delete (asks, lists what goes)"},
		{[]string{"D", "enter", "Z"}, "Z does nothing here: ? lists"},
	} {
		pressAll(m, "esc", "esc", "esc")
		pressAll(m, c.keys...)
		if out := plain(m.View().Content); !strings.Contains(out, c.want) {
			t.Errorf("%v: the flash does not say %q:\n%s", c.keys, c.want, out)
		}
	}
}

// The header names the list's view (:kind, :graph) on the list and an
// instance; the graphs screens show every graph, so there it names none.
func TestGraphsHeaderNamesNoListView(t *testing.T) {
	m := newModel(eventsBackend{newFake(graphsFixture(t))}, Options{Theme: "dark", ConfigPath: "-", Now: func() time.Time { return fixedNow }})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	pressAll(m, append(strings.Split(":graph database", ""), "enter")...)
	if head := firstLine(m); !strings.Contains(head, "graph database") {
		t.Fatalf("the list's header lacks its view: %q", head)
	}
	for _, keys := range [][]string{{"D"}, {"enter"}} {
		pressAll(m, keys...)
		if head := firstLine(m); strings.Contains(head, "graph database") {
			t.Errorf("%v: the graphs screen's header names the list's view: %q", keys, head)
		}
	}
}

func firstLine(m *Model) string {
	return strings.SplitN(plain(m.View().Content), "\n", 2)[0]
}

// tab on an empty prompt lists every command, :graphs included; an unknown
// command names it too.
func TestCommandsListGraphs(t *testing.T) {
	m, _ := newTestModel(t, fixture(), Options{}, 120, 24)
	press(m, ":", "tab")
	if out := plain(m.View().Content); !strings.Contains(out, " graphs ") {
		t.Errorf("tab on an empty prompt does not offer graphs:\n%s", out)
	}
	press(m, "esc", ":", "z", "z", "enter")
	if out := plain(m.View().Content); !strings.Contains(out, ":graphs") {
		t.Errorf("the unknown command's flash does not name :graphs:\n%s", out)
	}
}

// Counts are said in words: "1 instance", "2 instances", never
// "instance(s)" or "1 instances".
func TestCountsInWords(t *testing.T) {
	m := newModel(eventsBackend{newFake(graphsFixture(t))}, Options{Theme: "dark", ConfigPath: "-", Now: func() time.Time { return fixedNow }})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	for _, keys := range [][]string{
		append(strings.Split(":graph database", ""), "enter"),
		{"D", "j", "enter"}, {"i"}, {"R"},
		append(strings.Split(":kind WebApp", ""), "enter"),
	} {
		pressAll(m, keys...)
		out := plain(m.View().Content)
		if strings.Contains(out, "(s)") || strings.Contains(out, " 1 instances") {
			t.Errorf("%v: a count not in words:\n%s", keys, out)
		}
	}
}

// One config problem too long for the flash line says where it is whole:
// `kroscope config check`, with the --config the TUI was given (without
// it, the check reads another file).
func TestLongConfigProblemSaysWhereItIsWhole(t *testing.T) {
	file := configFile(t, "keys:\n  bogus: [z]\n")
	f := newFake(fixture())
	m := newModel(f, Options{Theme: "dark", ConfigPath: file, Now: func() time.Time { return fixedNow }})
	const width = 150 // room for the temporary file's long name, too little for the whole problem
	m.Update(tea.WindowSizeMsg{Width: width, Height: 24})
	lines := strings.Split(strings.TrimSuffix(plain(m.View().Content), "\n"), "\n")
	flash := lines[len(lines)-2]
	if !strings.Contains(flash, "…") || !strings.HasSuffix(flash, "(whole: kroscope config check --config "+file+")") || ansi.StringWidth(flash) > width {
		t.Errorf("flash %q", flash)
	}
	if len(lines) != 24 || !strings.Contains(lines[len(lines)-4], "unknown action") {
		t.Errorf("the problem does not take the three rows above the footer:\n%s", strings.Join(lines, "\n"))
	}
}

// A flash wider than the screen wraps onto up to three rows above the
// footer, the body giving them up, so an error is read whole at 60
// columns; it was cut to one row and shown whole nowhere.
func TestLongFlashWrapsAtNarrowWidths(t *testing.T) {
	m, _ := newTestModel(t, fixture(), Options{}, 60, 15)
	press(m, ":")
	typeText(m, "zz")
	press(m, "enter")
	lines := strings.Split(strings.TrimSuffix(plain(m.View().Content), "\n"), "\n")
	if len(lines) != 15 {
		t.Fatalf("%d rows, want 15:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	var flash []string
	for _, l := range lines[len(lines)-4 : len(lines)-1] {
		flash = append(flash, strings.TrimSpace(l))
	}
	if got := strings.Join(flash, " "); !strings.HasSuffix(got, `unknown command "zz": try :kind NAME, :ns NAME, :graph NAME, :graphs, :plan FILE or :q`) {
		t.Errorf("the flash rows read %q:\n%s", got, strings.Join(lines, "\n"))
	}
	if !strings.Contains(lines[len(lines)-1], "q quit") {
		t.Errorf("the footer is not the last row: %q", lines[len(lines)-1])
	}
	m.c.opts.Now = func() time.Time { return fixedNow.Add(time.Hour) }
	m.Update(tickMsg{})
	if lines := strings.Split(strings.TrimSuffix(plain(m.View().Content), "\n"), "\n"); len(lines) != 15 || strings.Contains(strings.Join(lines, "\n"), "unknown command") {
		t.Errorf("once the flash expires the body takes its rows back:\n%s", strings.Join(lines, "\n"))
	}
}

// Quitting the editor unchanged after the API server refused the edit
// says that nothing was applied and why, as an error, not "no change"
// (kubectl: "Edit cancelled, no valid changes were saved").
func TestEditRefusedThenQuitSaysNothingApplied(t *testing.T) {
	editorScript(t, `if [ $N = 1 ]; then sed -i 's/replicas: 2/replicas: many/' "$1"; fi`)
	b := &editBackend{fakeBackend: newFake(only(fixture(), "api")), validate: func(doc string) error {
		if strings.Contains(doc, "many") {
			return errors.New(`spec.replicas: Invalid value: "string": must be of type integer`)
		}
		return nil
	}}
	tm := newTeatest(t, b, Options{ConfigPath: "-", Theme: "dark"}, 160, 40)
	send(tm, "enter", "E")
	eventually(t, "the cancel", func() bool {
		return strings.Contains(tmFrame(t, tm), `edit of team-b/api cancelled, nothing applied: the API server refused it: spec.replicas: Invalid value`)
	})
	finalFrame(t, tm)
}

// A term still being typed ("state:", "kind:") narrows nothing yet; as
// free text it blanked the list ("No instance matches").
func TestFilterTermBeingTypedKeepsTheList(t *testing.T) {
	for _, term := range []string{"state:", "kind:", "ns:", "graph:"} {
		m, _ := newTestModel(t, fixture(), Options{}, 80, 24)
		press(m, "/")
		typeText(m, term)
		if out := plain(m.View().Content); strings.Contains(out, "No instance matches") || !strings.Contains(out, "team-a/shop") {
			t.Errorf("/%s:\n%s", term, out)
		}
	}
}

// The same on the graphs screen: "state:" being typed keeps the graphs.
func TestGraphsFilterTermBeingTypedKeepsTheGraphs(t *testing.T) {
	m := newModel(eventsBackend{newFake(graphsFixture(t))}, Options{Theme: "dark", ConfigPath: "-", Now: func() time.Time { return fixedNow }})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	pressAll(m, append([]string{"D", "/"}, strings.Split("scope:", "")...)...)
	if out := plain(m.View().Content); !strings.Contains(out, "database") || !strings.Contains(out, "webapp") {
		t.Errorf("/scope: hid the graphs:\n%s", out)
	}
}

// The graph pane says when nodes are out of sight: at 60x15 it showed 3
// of an instance's 5 resources under "GRAPH 2/5 ready" and nothing more.
func TestGraphPaneSaysNodesOutOfSight(t *testing.T) {
	m, _ := newTestModel(t, fixture(), Options{}, 60, 15)
	press(m, "enter")
	if out := plain(m.View().Content); !strings.Contains(out, "of 5, j/k scroll)") {
		t.Errorf("no word of the hidden nodes:\n%s", out)
	}
	m, _ = newTestModel(t, fixture(), Options{}, 200, 50)
	press(m, "enter")
	if out := plain(m.View().Content); strings.Contains(out, "j/k scroll)") {
		t.Errorf("every node shows, yet it says some are out of sight:\n%s", out)
	}
}

// A scrolled tab says how many lines are below the pane (the viewport cut
// them without a word: a YAML at 60x15 simply stopped), on an instance
// and on a graph; scrolled to the end, it says nothing.
func TestScrolledTabsSayLinesBelow(t *testing.T) {
	m, _ := newTestModel(t, fixture(), Options{}, 60, 15)
	press(m, "enter", "y")
	if out := plain(m.View().Content); !strings.Contains(out, "more lines (J, pgdown)") {
		t.Errorf("an instance's YAML at 60x15 hides lines without a word:\n%s", out)
	}
	press(m, "G")
	for range 40 {
		press(m, "J")
	}
	if out := plain(m.View().Content); strings.Contains(out, "more lines (J, pgdown)") {
		t.Errorf("scrolled to the end, it still says lines are below:\n%s", out)
	}
	g := newModel(eventsBackend{newFake(graphsFixture(t))}, Options{Theme: "dark", ConfigPath: "-", Now: func() time.Time { return fixedNow }})
	g.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	pressAll(g, "D", "G", "enter", "y")
	if out := plain(g.View().Content); !strings.Contains(out, "more lines (J, pgdown)") {
		t.Errorf("a graph's YAML at 80x24 hides lines without a word:\n%s", out)
	}
}
