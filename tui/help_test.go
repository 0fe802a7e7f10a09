package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// The help's scroll line fits its box at any width, and what is cut is
// wording, never the position.
func TestScrollHintFits(t *testing.T) {
	for _, c := range []struct {
		w    int
		want string
	}{
		{76, "j/k, pgup/pgdown scroll (21/90); other keys close"},
		{36, "j/k scroll (21/90); other keys close"}, // a 40-column terminal
		{34, "j/k scroll 21/90, other keys close"},
		{16, "j/k scroll 21/90"},
		{10, "21/90"},
	} {
		got := scrollHint(21, 90, c.w)
		if got != c.want {
			t.Errorf("width %d: %q, want %q", c.w, got, c.want)
		}
		if ansi.StringWidth(got) > c.w || !strings.Contains(got, "21/90") {
			t.Errorf("width %d: %q does not fit or lost the position", c.w, got)
		}
	}
}
