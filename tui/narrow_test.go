package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
)

// TestNarrow40x10: at 40x10 the READY column was cut to "RE" and "10"
// (10/10 read as a count) and the delete dialog was taller and wider
// than the window. KIND gives way under 50 columns; the dialog fits.
func TestNarrow40x10(t *testing.T) {
	m, _ := newTestModel(t, fixture(), Options{}, 40, 10)
	list := plain(m.Frame())
	if !strings.Contains(list, "READY") || !strings.Contains(list, "5/5") {
		t.Errorf("READY is cut at 40 columns:\n%s", list)
	}
	press(m, "j", "ctrl+d")
	out := plain(m.Frame())
	golden.RequireEqual(t, list+out)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) > 10 || !strings.Contains(out, "╭") || !strings.Contains(out, "╯") {
		t.Errorf("the dialog does not fit 40x10 (%d lines):\n%s", len(lines), out)
	}
	for _, l := range lines {
		if ansi.StringWidth(l) > 40 {
			t.Errorf("a line wider than 40: %q", l)
		}
	}
	if !strings.Contains(out, "Delete") || !strings.Contains(out, "Cancel") {
		t.Errorf("the dialog's choices are gone:\n%s", out)
	}
}
