package tui

import (
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
	for _, in := range m.list().rows {
		out = append(out, in.Key.Namespace+"/"+in.Key.Name)
	}
	return out
}

// ": does nothing; there is no way to jump to a kind or namespace": the
// commands filter the list, from any screen, and keep each other's terms.
func TestNewUserCommandModeJumps(t *testing.T) {
	m, _ := newTestModel(t, fixture(), Options{}, 160, 48)
	press(m, "enter") // from an instance screen
	typeText(m, ":kind Database")
	press(m, "enter")
	if m.detail() != nil {
		t.Fatal(":kind did not bring the list to the front")
	}
	if got := rowNames(m); strings.Join(got, " ") != "team-b/orders team-c/cache" {
		t.Fatalf(":kind Database rows = %v", got)
	}
	typeText(m, ":ns team-c")
	press(m, "enter")
	if got := rowNames(m); strings.Join(got, " ") != "team-c/cache" {
		t.Fatalf(":ns after :kind rows = %v (query %q)", got, m.list().query)
	}
	typeText(m, ":ns all")
	press(m, "enter")
	typeText(m, ":webapps")
	press(m, "enter")
	if got := rowNames(m); len(got) != 4 || m.list().query != "kind:webapp" {
		t.Fatalf(":webapps rows = %v, query %q", got, m.list().query)
	}
	typeText(m, ":graph database")
	press(m, "enter")
	if q := m.list().query; q != "kind:webapp graph:database" || len(m.list().rows) != 0 {
		t.Fatalf(":graph query %q rows %v", q, rowNames(m))
	}
	typeText(m, ":nonsense")
	press(m, "enter")
	if out := plain(m.View().Content); !strings.Contains(out, `unknown command "nonsense"`) {
		t.Fatalf("no error for an unknown command:\n%s", out)
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
	typeText(m, "w")
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
