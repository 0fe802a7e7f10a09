package tui

import (
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// helpScreen lists every key of the screen it was opened over, generated
// from the same action tables as dispatch and the footer, and the
// navigation rules. It fits the terminal: descriptions wrap (never cut),
// wide terminals get columns, and what does not fit scrolls.
type helpScreen struct {
	boxed
	c      *common
	hints  []hint
	has    map[string]bool
	all    []string // every line of the help, laid out for the width
	offset int      // the first line shown
	rows   int      // how many lines the box shows
}

// navigationRules are the promises the keys keep; tests hold them. Each
// is listed only on a screen that has the action it speaks of (need):
// the help listed rules for features the screen lacks.
var navigationRules = []struct{ rule, need string }{
	{"esc always goes back one level, in one press", "back"},
	{"j/k move the cursor; the tabs change what the detail shows, not what j/k move", "nextView"},
	{"J/K and page keys scroll the detail", "scrollDown"},
	{"filtering puts the cursor on the first match; sorting keeps it on its row", "filter"},
	{"the same sort key again reverses the order (the arrow in the header says which)", "sort"},
	{filterHelp, "requeueAll"}, // the instance list's filter terms
}

// filterHelp names every term the filter takes.
const filterHelp = "filter: text  state:error  kind:WebApp  ns:team-a  graph:webapp"

// newHelpScreen lists hints: the actions of the screen it opens over,
// in sections; has says which actions that screen has.
func newHelpScreen(c *common, hints []hint, has map[string]bool) *helpScreen {
	s := &helpScreen{c: c, hints: hints, has: has}
	s.acts = s.actions()
	return s
}

// Update: any key no action took closes the help.
func (s *helpScreen) Update(msg tea.Msg) tea.Cmd {
	if _, ok := msg.(tea.KeyPressMsg); ok {
		s.c.host.pop()
	}
	return nil
}

func (s *helpScreen) views() []string { return []string{viewHelp} }

// helpFrameW and helpFrameH are the box's border and padding.
const helpFrameW, helpFrameH = 4, 2

// scroll moves the help by n lines, within its length.
func (s *helpScreen) scroll(n int) {
	s.offset = clamp(s.offset+n, 0, max(len(s.all)-s.rows, 0))
}

// prepare lays the help out for the terminal and draws the visible part.
func (s *helpScreen) prepare() {
	th := s.c.th
	iw := max(s.w-helpFrameW, 16)
	s.all = s.layout(iw)
	s.rows = max(s.h-helpFrameH, 3)
	lines := s.all
	if len(lines) > s.rows {
		s.rows-- // the scroll line
		s.scroll(0)
		end := min(s.offset+s.rows, len(lines))
		more := th.Dim.Render(clip(scrollHint(end, len(lines), iw), iw, th.G.Ellipsis))
		lines = append(append([]string(nil), lines[s.offset:end]...), more)
	}
	s.box = th.Dialog.Render(strings.Join(lines, "\n"))
}

// scrollHint says how to scroll the help and where it is, in the longest
// wording that fits width w: the position is never the part cut.
func scrollHint(end, total, w int) string {
	pos := strconv.Itoa(end) + "/" + strconv.Itoa(total)
	for _, h := range []string{
		"j/k, pgup/pgdown scroll (" + pos + "); other keys close",
		"j/k scroll (" + pos + "); other keys close",
		"j/k scroll " + pos + ", other keys close",
		"j/k scroll " + pos,
	} {
		if ansi.StringWidth(h) <= w {
			return h
		}
	}
	return pos
}

// layout is every line of the help at inner width iw: the keys in as many
// columns as fit with readable descriptions, then the notes.
func (s *helpScreen) layout(iw int) []string {
	th := s.c.th
	out := []string{th.Title.Render("Keys"), ""}
	// What this user may not do comes first: it explains the greyed keys.
	var denied []string
	for _, x := range s.hints {
		if x.denied != "" {
			denied = append(denied, x.key+": "+x.denied)
		}
	}
	if len(denied) > 0 {
		out = append(out, th.Bold.Render("Not allowed")+th.Dim.Render(" (pressing one says why)"))
		for _, d := range denied {
			out = append(out, indentWrap(d, iw, "  ", th.Dim.Render)...)
		}
		out = append(out, "")
	}
	out = append(out, s.keyLines(iw)...)
	out = append(out, "", th.Bold.Render("Navigation"))
	for _, r := range navigationRules {
		if s.has[r.need] {
			out = append(out, indentWrap(r.rule, iw, "  ", th.Dim.Render)...)
		}
	}
	out = append(out, "")
	for _, n := range []string{"remap keys in $XDG_CONFIG_HOME/kroscope/config.yaml (kroscope config check)", "any other key closes (j/k and the page keys scroll)"} {
		out = append(out, indentWrap(n, iw, "", th.Dim.Render)...)
	}
	return out
}

// helpColumnMin is the narrowest column of keys and descriptions worth
// having: a description narrower wraps into a word a line.
const helpColumnMin = 60

// keyLines are the key entries in columns, each description wrapped to
// its column.
func (s *helpScreen) keyLines(iw int) []string {
	th := s.c.th
	cols := clamp((iw+3)/(helpColumnMin+3), 1, 3)
	colW := (iw - 3*(cols-1)) / cols
	kw := 0
	for _, x := range s.hints {
		kw = max(kw, ansi.StringWidth(x.key))
	}
	kw = min(kw, colW/3)
	dw := max(colW-kw-1, 8)
	// Each entry's lines, then split into columns of about equal height.
	var entries [][]string
	total := 0
	for _, x := range s.hints {
		if x.section != "" {
			entries = append(entries, []string{th.Bold.Render(x.section)})
			total++
			continue
		}
		keyStyle, descStyle := th.Key.Render, th.KeyDesc.Render
		if x.denied != "" { // greyed: this user may not
			keyStyle, descStyle = th.Dim.Render, th.Dim.Render
		}
		keys := wrap(x.key, kw)
		desc := wrap(x.desc, dw)
		var e []string
		for i := range max(len(keys), len(desc)) {
			k, d := "", ""
			if i < len(keys) {
				k = keys[i]
			}
			if i < len(desc) {
				d = desc[i]
			}
			e = append(e, keyStyle(fit(k, kw, ""))+" "+descStyle(fit(d, dw, "")))
		}
		entries = append(entries, e)
		total += len(e)
	}
	return intoColumns(entries, total, cols, colW)
}

// intoColumns lays entries (each a few lines) into cols columns of about
// equal height, colW wide, never splitting an entry.
func intoColumns(entries [][]string, total, cols, colW int) []string {
	per := (total + cols - 1) / cols
	var columns [][]string
	var cur []string
	for _, e := range entries {
		if len(cur) > 0 && len(cur)+len(e) > per && len(columns) < cols-1 {
			columns = append(columns, cur)
			cur = nil
		}
		cur = append(cur, e...)
	}
	columns = append(columns, cur)
	height := 0
	for _, c := range columns {
		height = max(height, len(c))
	}
	blank := strings.Repeat(" ", colW)
	out := make([]string, height)
	for r := range height {
		parts := make([]string, len(columns))
		for c, col := range columns {
			parts[c] = blank
			if r < len(col) {
				parts[c] = col[r]
			}
		}
		out[r] = strings.TrimRight(strings.Join(parts, "   "), " ")
	}
	return out
}

// indentWrap wraps s to w cells with indent before each line, styled.
func indentWrap(s string, w int, indent string, style func(...string) string) []string {
	var out []string
	for _, l := range wrap(s, max(w-len(indent), 8)) {
		out = append(out, style(indent+l))
	}
	return out
}

func (s *helpScreen) actions() []action {
	closeHelp := do0(s.c.host.pop)
	scroll := func(n int) func() tea.Cmd { return do0(func() { s.scroll(n) }) }
	page := func(sign int) func() tea.Cmd { return do0(func() { s.scroll(sign * max(s.rows-1, 1)) }) }
	return offer(
		share("help", "close the help", "close", closeHelp),
		share("back", "close the help", "close", closeHelp),
		share("down", "scroll the help", "scroll", scroll(1)),
		share("up", "scroll the help back", "", scroll(-1)),
		share("pageDown", "page the help", "", page(1)),
		share("pageUp", "page the help back", "", page(-1)),
	)
}
