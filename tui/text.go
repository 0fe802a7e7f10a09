package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/viewport"
	"github.com/charmbracelet/x/ansi"
	"github.com/kroscope/kroscope/theme"
)

// fit truncates s (plain or styled) to w cells with the ellipsis, then pads
// it with spaces to exactly w cells.
func fit(s string, w int, ellipsis string) string {
	if w <= 0 {
		return ""
	}
	sw := ansi.StringWidth(s)
	if sw > w {
		if ansi.StringWidth(ellipsis) >= w {
			ellipsis = ""
		}
		s = ansi.Truncate(s, w, ellipsis)
		sw = ansi.StringWidth(s)
	}
	if pad := w - sw; pad > 0 {
		s += strings.Repeat(" ", pad)
	}
	return s
}

// fitLeft right-aligns s (plain) in w cells, cutting it when longer.
func fitLeft(s string, w int) string {
	if sw := ansi.StringWidth(s); sw < w {
		return strings.Repeat(" ", w-sw) + s
	}
	return ansi.Truncate(s, max(w, 0), "")
}

// padLines pads a block of lines already w cells wide to h lines, without
// measuring them again (the table's rows are built to width).
func padLines(ls []string, w, h int) []string {
	if len(ls) > h {
		ls = ls[:h]
	}
	blank := strings.Repeat(" ", max(w, 0))
	for len(ls) < h {
		ls = append(ls, blank)
	}
	return ls
}

// clip truncates without padding.
func clip(s string, w int, ellipsis string) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) > w {
		if ansi.StringWidth(ellipsis) >= w {
			ellipsis = ""
		}
		return ansi.Truncate(s, w, ellipsis)
	}
	return s
}

// wrap word-wraps text to w cells, breaking long words too, and returns
// lines: the TUI's one wrapping function. It word-wraps at spaces, commas
// and slashes (x/ansi's Wordwrap), then cuts what is still too long
// (Hardwrap). x/ansi's Wrap does both at once but leaves a line like
// "capacity /" a cell or two too wide, and the pane's edge then cut the
// " /" off: `${a / b}` read `${a` / `b}`.
func wrap(s string, w int) []string {
	if w < 1 {
		w = 1
	}
	var out []string
	for _, para := range strings.Split(s, "\n") {
		// Wordwrap breaks after every hyphen: "--observe" and "team-a"
		// are one word each, so hyphens stand aside while it runs.
		para = strings.ReplaceAll(para, "-", nbHyphen)
		wrapped := ansi.Hardwrap(ansi.Wordwrap(para, w, ",/"), w, true)
		out = append(out, strings.Split(strings.ReplaceAll(wrapped, nbHyphen, "-"), "\n")...)
	}
	return out
}

// wrapIndented wraps a line of indented text (a plan, a log) to w cells,
// its continuation lines indented two cells more than it.
func wrapIndented(l string, w int) []string {
	body := strings.TrimLeft(l, " ")
	ind := len(l) - len(body)
	if ansi.StringWidth(l) <= w || w-ind-2 < 12 {
		return wrap(l, w)
	}
	out := wrap(body, w-ind-2)
	for i := range out {
		pad := ind + 2
		if i == 0 {
			pad = ind
		}
		out[i] = strings.Repeat(" ", pad) + out[i]
	}
	return out
}

// hang lays text out after head (already drawn, headW cells wide) in w
// cells: the first line beside head, the rest under the text's start,
// or two cells in when that leaves the text under 16 cells.
func hang(head string, headW int, text string, w int) []string {
	ind := headW
	if w-ind < 16 {
		ind = 2
	}
	first := wrap(text, max(w-headW, 1))
	out := []string{head + first[0]}
	if len(first) == 1 {
		return out
	}
	rest := strings.Join(first[1:], " ")
	for _, l := range wrap(rest, max(w-ind, 1)) {
		out = append(out, strings.Repeat(" ", ind)+l)
	}
	return out
}

// nbHyphen is U+2011, a hyphen no wrap breaks at, one cell wide as "-".
const nbHyphen = "\u2011"

// ago renders how long before now t was, compactly ("4s", "3m", "2h", "5d").
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return short(now.Sub(t))
}

// ageOf is an object's age in whole units: the AGE column is four cells
// wide, so a young object reads "0s", not "341ms" cut to "341…".
func ageOf(now, created time.Time) string {
	if !created.IsZero() && now.Sub(created) < time.Second {
		return "0s"
	}
	return ago(now, created)
}

// short renders a duration in at most four cells where possible.
func short(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// dur renders a reconcile or rollout duration with one decimal under a minute.
func dur(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// lines pads or cuts a block to exactly h lines of width w.
func block(ls []string, w, h int, ellipsis string) []string {
	out := make([]string, h)
	for i := range out {
		if i < len(ls) {
			out[i] = fit(ls[i], w, ellipsis)
		} else {
			out[i] = strings.Repeat(" ", max(w, 0))
		}
	}
	return out
}

func clamp(v, lo, hi int) int {
	if hi < lo {
		return lo
	}
	return min(max(v, lo), hi)
}

// withMoreBelow is a scrolled text's visible lines, the last one replaced
// by how many lines are below it when some are: a viewport cuts rows
// without a word.
func withMoreBelow(vp *viewport.Model, th *theme.Theme, w int) []string {
	lines := strings.Split(vp.View(), "\n")
	below := vp.TotalLineCount() - vp.YOffset() - len(lines)
	if below <= 0 || len(lines) < 2 {
		return lines
	}
	note := fmt.Sprintf("%s %d more lines (J, pgdown)", th.G.Ellipsis, below+1)
	lines[len(lines)-1] = th.Dim.Render(fit(note, w, th.G.Ellipsis))
	return lines
}
