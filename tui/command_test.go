package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// typeText sends each rune as a key press, as a person types.
func typeText(m *Model, s string) {
	for _, r := range s {
		m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func rowNames(m *Model) []string {
	var out []string
	for _, in := range listOf(m).table.rows {
		out = append(out, in.Key.Namespace+"/"+in.Key.Name)
	}
	return out
}

// ": does nothing; there is no way to jump to a kind or namespace": the
// commands switch the list, from any screen, as k9s switches views: a
// kind or graph replaces what the list shows (keeping its namespace), a
// namespace replaces only the namespace.
func TestNewUserCommandModeJumps(t *testing.T) {
	m, _ := newTestModel(t, fixture(), Options{}, 160, 48)
	press(m, "enter") // from an instance screen
	typeText(m, ":kind Database")
	press(m, "enter")
	if detailOf(m) != nil {
		t.Fatal(":kind did not bring the list to the front")
	}
	if got := rowNames(m); strings.Join(got, " ") != "team-b/orders team-c/cache" {
		t.Fatalf(":kind Database rows = %v", got)
	}
	// The header names the kind as the graph spells it (it said "kind
	// database": the filter matches in lower case).
	if head := strings.SplitN(plain(m.View().Content), "\n", 2)[0]; !strings.Contains(head, "kind Database") {
		t.Errorf("header %q, want it to name kind Database", head)
	}
	typeText(m, ":ns team-c")
	press(m, "enter")
	if got := rowNames(m); strings.Join(got, " ") != "team-c/cache" {
		t.Fatalf(":ns after :kind rows = %v (query %q)", got, listOf(m).table.query)
	}
	typeText(m, ":ns all")
	press(m, "enter")
	typeText(m, ":webapps")
	press(m, "enter")
	if got := rowNames(m); len(got) != 4 || listOf(m).table.query != "kind:webapp" {
		t.Fatalf(":webapps rows = %v, query %q", got, listOf(m).table.query)
	}
	if head := strings.SplitN(plain(m.View().Content), "\n", 2)[0]; !strings.Contains(head, "kind WebApp") {
		t.Errorf("header after :webapps %q, want kind WebApp", head)
	}
	typeText(m, ":graph database")
	press(m, "enter")
	if q := listOf(m).table.query; q != "graph:database" || len(listOf(m).table.rows) != 2 {
		t.Fatalf(":graph after :kind: query %q rows %v, want the graph's instances alone", q, rowNames(m))
	}
	typeText(m, ":nonsense")
	press(m, "enter")
	if out := plain(m.View().Content); !strings.Contains(out, `unknown command "nonsense"`) {
		t.Fatalf("no error for an unknown command:\n%s", out)
	}
}

// k9s habits: `:ns all` shows every namespace again, `:ns nosuch` says
// there are none and the header names the namespace shown, and a graph is
// named by a prefix of its name or its kind (`graph:webapp` is
// webapp.kro.run).
func TestCommandsSwitchTheViewAndTheHeader(t *testing.T) {
	snap := fixture()
	for i := range snap.Graphs {
		snap.Graphs[i].Name += ".kro.run"
	}
	for _, in := range snap.Instances {
		in.Graph += ".kro.run"
	}
	m, _ := newTestModel(t, snap, Options{}, 80, 24)
	typeText(m, ":graph webapp")
	press(m, "enter")
	if got := len(listOf(m).table.rows); got != 4 {
		t.Fatalf(":graph webapp shows %d rows (query %q), want webapp.kro.run's 4", got, listOf(m).table.query)
	}
	out := plain(m.View().Content)
	if head := strings.SplitN(out, "\n", 2)[0]; !strings.Contains(head, "graph webapp.kro.run") {
		t.Fatalf("header does not name the graph shown: %q", head)
	}
	if !strings.Contains(out, "[graph:webapp.kro.run]") {
		t.Fatalf("the filter's term is not a chip on the summary line:\n%s", out)
	}
	typeText(m, ":ns nosuch")
	press(m, "enter")
	out = plain(m.View().Content)
	if head := strings.SplitN(out, "\n", 2)[0]; strings.Contains(head, "all ns") || !strings.Contains(head, "ns nosuch") {
		t.Fatalf("header after :ns nosuch = %q", head)
	}
	if !strings.Contains(out, "namespace nosuch: no instances there") {
		t.Fatalf(":ns nosuch does not say there are none:\n%s", out)
	}
	typeText(m, ":ns all")
	press(m, "enter")
	if got := len(listOf(m).table.rows); got != 4 {
		t.Fatalf(":ns all shows %d rows, want the graph's 4 in every namespace", got)
	}
	typeText(m, ":kind database")
	press(m, "enter")
	if got := len(listOf(m).table.rows); got != 2 {
		t.Fatalf(":kind after :graph shows %d rows (query %q), want Database's 2", got, listOf(m).table.query)
	}
	press(m, "/")
	typeText(m, "graph:web")
	press(m, "enter")
	if got := len(listOf(m).table.rows); got != 0 {
		t.Fatalf("graph:web with kind:database = %d rows", got)
	}
	press(m, "esc")
	press(m, "/")
	typeText(m, "graph:webapp")
	press(m, "enter")
	if got := len(listOf(m).table.rows); got != 4 {
		t.Fatalf("graph:webapp = %d rows, want webapp.kro.run's 4", got)
	}
}

// Tab on an empty prompt lists the commands in the hint's place, not
// over it.
func TestCommandTabOnEmptyPrompt(t *testing.T) {
	m, _ := newTestModel(t, fixture(), Options{}, 80, 24)
	press(m, ":", "tab")
	lines := strings.Split(plain(m.View().Content), "\n")
	line := ""
	for _, l := range lines {
		if strings.HasPrefix(l, ":") {
			line = l
		}
	}
	if !strings.Contains(line, "graph graphs kind") || strings.Contains(line, "NAME") {
		t.Fatalf("prompt line after tab = %q, want the candidates alone", line)
	}
}

func TestCommandCompletionAndHistory(t *testing.T) {
	m, _ := newTestModel(t, fixture(), Options{}, 160, 48)
	typeText(m, ":ns te")
	press(m, "tab")
	if v := m.cmd.input.Value(); v != "ns team-" {
		t.Fatalf("completed to %q, want the common prefix", v)
	}
	if out := plain(m.View().Content); !strings.Contains(out, ":ns team-") || !strings.Contains(out, "  team-a team-b team-c") {
		t.Fatalf("candidates not shown:\n%s", out)
	}
	typeText(m, "b")
	press(m, "tab")
	if v := m.cmd.input.Value(); v != "ns team-b " {
		t.Fatalf("completed to %q", v)
	}
	press(m, "enter")
	typeText(m, ":ki")
	press(m, "tab")
	typeText(m, "da")
	press(m, "tab")
	if v := m.cmd.input.Value(); v != "kind database " {
		t.Fatalf("completed to %q", v)
	}
	press(m, "enter")
	typeText(m, ":gr")
	press(m, "tab")
	if v := m.cmd.input.Value(); v != "graph" {
		t.Fatalf("gr completed to %q, want graph (graph and graphs remain)", v)
	}
	typeText(m, " w")
	press(m, "tab")
	if v := m.cmd.input.Value(); v != "graph webapp " {
		t.Fatalf("graph completed to %q", v)
	}
	press(m, "esc")
	if m.cmd.active {
		t.Fatal("esc did not close the prompt")
	}
	press(m, ":", "up")
	if v := m.cmd.input.Value(); v != "kind database" {
		t.Fatalf("history up = %q", v)
	}
	press(m, "up")
	if v := m.cmd.input.Value(); v != "ns team-b" {
		t.Fatalf("history up twice = %q", v)
	}
	press(m, "down", "down")
	if v := m.cmd.input.Value(); v != "" {
		t.Fatalf("history back to the new line = %q", v)
	}
	typeText(m, "q")
	press(m, "enter")
	if !m.quitting {
		t.Fatal(":q did not quit")
	}
}

// The same as a person at the terminal: `:` then a kind, then a namespace.
func TestNewUserCommandModeFlow(t *testing.T) {
	tm, _ := flowOver(t, fixture(), Options{}, 120, 30)
	send(tm, "enter", ":", "k", "i", "n", "d", " ", "D", "a", "t", "a", "b", "a", "s", "e", "enter")
	var out string
	eventually(t, "the kind's rows", func() bool {
		out = tmFrame(t, tm)
		return strings.Contains(out, "team-b/orders") && !strings.Contains(out, "team-a/shop")
	})
	send(tm, ":", "n", "s", " ", "t", "e", "a", "m", "-", "c", "enter")
	eventually(t, "the namespace's rows", func() bool {
		out = tmFrame(t, tm)
		return strings.Contains(out, "team-c/cache") && !strings.Contains(out, "team-b/orders")
	})
	finalFrame(t, tm)
}

// :plan completes file paths (#38): a folder with its slash, to go on,
// then the YAML file in it; other files are not offered.
func TestPlanCompletesFilePaths(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "webapp"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"webapp/rgd.yaml", "webapp/notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, _ := newTestModel(t, fixture(), Options{}, 120, 30)
	press(m, ":")
	typeText(m, "plan "+dir+"/we")
	press(m, "tab")
	if got := m.cmd.input.Value(); got != "plan "+dir+"/webapp/" {
		t.Fatalf("tab on a folder: %q", got)
	}
	press(m, "tab")
	if got := m.cmd.input.Value(); got != "plan "+dir+"/webapp/rgd.yaml " {
		t.Fatalf("tab in the folder: %q", got)
	}
}
