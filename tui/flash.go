package tui

import (
	"strings"
	"time"

	"github.com/kroscope/kroscope/theme"
)

// flash is the one-line result of the last action (or a config problem),
// shown above the footer until it expires.
type flash struct {
	text  string
	isErr bool
	at    time.Time
	ttl   time.Duration
}

func (f *flash) set(s string, isErr bool, now time.Time, ttl time.Duration) {
	f.text, f.isErr, f.at, f.ttl = s, isErr, now, ttl
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
	return st.Render(fit(f.text, w, th.G.Ellipsis))
}
