package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/golden"
)

// dumb is a model on a terminal that draws no attribute (TERM=dumb: the
// program reports the NoTTY profile and strips every escape sequence).
func dumb(t *testing.T, w, h int) *Model {
	t.Helper()
	m, _ := newTestModel(t, fixture(), Options{}, w, h)
	m.Update(tea.ColorProfileMsg{Profile: colorprofile.NoTTY})
	return m
}

// TestDumbTerminalMarksSelection: under TERM=dumb the cursor row, the
// active tab and the dialog's choice were byte-identical before and after
// a move; each now carries a text mark.
func TestDumbTerminalMarksSelection(t *testing.T) {
	m := dumb(t, 80, 24)
	before := plain(m.Frame())
	press(m, "j")
	after := plain(m.Frame())
	if before == after {
		t.Fatalf("moving the cursor changed nothing on a dumb terminal:\n%s", after)
	}
	golden.RequireEqual(t, after)
	if !strings.Contains(after, "▸ ✓ ACTIVE      team-a/shop") {
		t.Errorf("the cursor row is not marked:\n%s", after)
	}
	press(m, "enter")
	if out := plain(m.Frame()); !strings.Contains(out, "[Inspect]") {
		t.Errorf("the active tab is not marked:\n%s", out)
	}
	press(m, "esc", "ctrl+d")
	out := plain(m.Frame())
	if !strings.Contains(out, "[Cancel]") || strings.Contains(out, "[Delete]") {
		t.Errorf("the dialog's default choice is not marked:\n%s", out)
	}
	press(m, "right")
	if out := plain(m.Frame()); !strings.Contains(out, "[Delete]") || strings.Contains(out, "[Cancel]") {
		t.Errorf("the dialog's choice after → is not marked:\n%s", out)
	}
}
