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
	seq   int    // counts the flashes set
}

func (f *flash) set(s string, isErr bool, now time.Time, ttl time.Duration) {
	f.text, f.isErr, f.at, f.ttl, f.whole = s, isErr, now, ttl, ""
	f.seq++
}

// expire clears the flash once its time is up.
func (f *flash) expire(now time.Time) {
	if f.text != "" && now.Sub(f.at) > f.ttl {
		f.text = ""
	}
}

func (f *flash) visible() bool { return f.text != "" }

// maxFlashLines is how many rows a long flash may take. At 60 columns an
// error cut to one line was shown whole nowhere.
const maxFlashLines = 3

// lines renders the flash w cells wide: one line, or, when the text is
// wider, wrapped onto up to maxFlashLines rows, the last one cut (and
// saying where the whole text is, when that is known).
func (f *flash) lines(th *theme.Theme, w int) []string {
	if f.text == "" {
		return []string{strings.Repeat(" ", max(w, 0))}
	}
	st := th.FlashOK
	if f.isErr {
		st = th.FlashErr
	}
	ls := wrap(f.text, max(w, 1))
	if len(ls) > maxFlashLines {
		rest := strings.Join(ls[maxFlashLines-1:], " ")
		ls = append(ls[:maxFlashLines-1], cutSaying(rest, f.whole, w, th.G.Ellipsis))
	}
	for i, l := range ls {
		ls[i] = st.Render(fit(l, w, th.G.Ellipsis))
	}
	return ls
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
