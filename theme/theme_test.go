package theme

import (
	"strings"
	"testing"
	"unicode"

	"charm.land/lipgloss/v2"
)

// TestStateMap pins the state → glyph/colour map the issue specifies.
func TestStateMap(t *testing.T) {
	p := darkPalette()
	th := Must(Options{Name: Dark})
	spin := UnicodeGlyphs.Spinner[0]
	for _, c := range []struct {
		state, glyph string
		colour       any
	}{
		{"SYNCED", "✓", p.Green}, {"ACTIVE", "✓", p.Green},
		{"IN_PROGRESS", spin, p.Blue}, {"CREATED", spin, p.Blue}, {"UPDATING", spin, p.Blue},
		{"WAITING_READY", "◐", p.Yellow}, {"WAITING_DEPENDENCIES", "◐", p.Yellow},
		{"PENDING", "○", p.Dim}, {"", "○", p.Dim},
		{"SKIPPED", "⊘", p.Grey},
		{"ERROR", "✗", p.Red}, {"FAILED", "✗", p.Red},
		{"DELETING", "⊖", p.Magenta}, {"PENDING_DELETION", "⊖", p.Magenta}, {"DELETED", "⊖", p.Magenta},
		{"SUSPENDED", "‖", p.Yellow},
		{"SOMETHING_NEW", "?", p.Grey},
	} {
		if g := th.Glyph(c.state, 0); g != c.glyph {
			t.Errorf("%s glyph = %q, want %q", c.state, g, c.glyph)
		}
		if fg := th.Style(c.state).GetForeground(); fg != c.colour {
			t.Errorf("%s colour = %v, want %v", c.state, fg, c.colour)
		}
	}
	// One shared spinner: the frame picks the glyph, negative frames wrap.
	if th.Glyph("IN_PROGRESS", 1) != UnicodeGlyphs.Spinner[1] || th.Glyph("IN_PROGRESS", -1) == "" {
		t.Error("spinner frames")
	}
}

func TestASCIIReplacesEveryGlyph(t *testing.T) {
	g := ASCIIGlyphs
	all := []string{g.Synced, g.Waiting, g.Pending, g.Skipped, g.Error, g.Deleting, g.Unknown, g.Cursor, g.Ellipsis,
		g.Arrow, g.Sep, g.Warn, g.Dot, g.TreeBranch, g.TreeLast, g.TreeVert, g.TreeSpace, g.BarFull, g.BarEmpty, g.BarTick}
	all = append(all, g.Spinner...)
	b := g.Border
	all = append(all, b.Top, b.Bottom, b.Left, b.Right, b.TopLeft, b.TopRight, b.BottomLeft, b.BottomRight)
	for _, s := range all {
		for _, r := range s {
			if r > unicode.MaxASCII {
				t.Errorf("ASCII glyph %q is not ASCII", s)
			}
		}
	}
	// Distinct classes stay distinguishable without colour.
	seen := map[string]Class{}
	th := Must(Options{Name: Dark, ASCII: true})
	for _, c := range Classes {
		if c == ClassProgress {
			continue
		}
		gl := th.ClassGlyph(c, 0)
		if prev, dup := seen[gl]; dup {
			t.Errorf("classes %s and %s share glyph %q", prev.Word(), c.Word(), gl)
		}
		seen[gl] = c
	}
}

func TestNoColorHasNoColours(t *testing.T) {
	for _, name := range Names() {
		th := Must(Options{Name: name, NoColor: true})
		for _, st := range []string{"SYNCED", "ERROR", "WAITING_READY", "DELETING"} {
			out := th.State(st, st, 0)
			if strings.Contains(out, "38;") || strings.Contains(out, "48;") {
				t.Errorf("%s/%s: colour in NO_COLOR output %q", name, st, out)
			}
		}
		if out := th.Selected.Render("row"); !strings.Contains(out, "7") {
			t.Errorf("%s: NO_COLOR cursor should be reverse video, got %q", name, out)
		}
	}
}

func TestThemesDiffer(t *testing.T) {
	dark, light := Must(Options{Name: Dark}), Must(Options{Name: Light})
	hc := Must(Options{Name: HighContrast})
	if dark.P.Green == light.P.Green {
		t.Error("light and dark share greens")
	}
	if hc.P.Red != lipgloss.BrightRed {
		t.Error("high contrast should use the bright ANSI colours")
	}
	if a := Must(Options{Name: Auto, IsDark: false}); a.P != light.P {
		t.Error("auto on a light background is not the light palette")
	}
	if a := Must(Options{IsDark: true}); a.P != dark.P {
		t.Error("auto on a dark background is not the dark palette")
	}
	if _, err := New(Options{Name: "sepia"}); err == nil || !strings.Contains(err.Error(), "high-contrast") {
		t.Errorf("unknown theme error = %v", err)
	}
}
