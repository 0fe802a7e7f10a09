package tui

import (
	"strings"

	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/kroscope/kroscope/theme"
)

// flash is the one-line result of the last action (or a config problem),
// shown above the footer until it expires.
type flash struct {
	text  string
	isErr bool
	at    time.Time
	ttl   time.Duration
	whole string // where the whole text is, said when the line cuts it
}

func (f *flash) set(s string, isErr bool, now time.Time, ttl time.Duration) {
	f.text, f.isErr, f.at, f.ttl, f.whole = s, isErr, now, ttl, ""
}

// expire clears the flash once its time is up.
func (f *flash) expire(now time.Time) {
	if f.text != "" && now.Sub(f.at) > f.ttl {
		f.text = ""
	}
}

func (f *flash) visible() bool { return f.text != "" }

// View renders the flash line w cells wide.
func (f *flash) View(th *theme.Theme, w int) string {
	if f.text == "" {
		return strings.Repeat(" ", max(w, 0))
	}
	st := th.FlashOK
	if f.isErr {
		st = th.FlashErr
	}
	return st.Render(fit(cutSaying(f.text, f.whole, w, th.G.Ellipsis), w, th.G.Ellipsis))
}

// cutSaying cuts text to w cells and, when it had to, says where the
// whole text is (when that still leaves room for some of the text).
func cutSaying(text, where string, w int, ellipsis string) string {
	if where == "" || ansi.StringWidth(text) <= w {
		return text
	}
	tail := " (whole: " + where + ")"
	room := w - ansi.StringWidth(tail)
	if room < 20 {
		return text
	}
	return strings.TrimRight(fit(text, room, ellipsis), " ") + tail
}
