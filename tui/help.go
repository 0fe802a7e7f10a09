package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// helpScreen lists every key of the screen it was opened over, generated
// from the same action tables as dispatch and the footer, and the
// navigation rules.
type helpScreen struct {
	c     *common
	hints []hint
	w, h  int
	box   string
}

// navigationRules are the promises the keys keep; tests hold them.
var navigationRules = []string{
	"esc always goes back one level, in one press",
	"j/k move the cursor; the tabs change what the detail shows, not what j/k move",
	"J/K and page keys scroll the detail",
	"filtering or sorting puts the cursor on the first match",
	"the same sort key again reverses the order (the arrow in the header says which)",
}

func newHelpScreen(m *Model) *helpScreen {
	panes := m.activePanes()
	return &helpScreen{c: m.c, hints: m.helpHints(panes...)}
}

func (s *helpScreen) Update(tea.Msg) tea.Cmd { return nil }
func (s *helpScreen) SetSize(w, h int)       { s.w, s.h = w, h }
func (s *helpScreen) pane() pane             { return paneHelp }
func (s *helpScreen) overlay() bool          { return true }
func (s *helpScreen) View() string           { return s.box }

// prepare lays the keys out in as many columns as fit.
func (s *helpScreen) prepare() {
	th := s.c.th
	// As many columns as the height needs (the box's frame, title and notes
	// take 9 lines); each column as wide as its own keys, the descriptions
	// sharing what is left.
	maxW := max(s.w-8, 20)
	var denied, deniedKeys []string
	for _, x := range s.hints {
		if x.denied != "" {
			denied = append(denied, clip("  "+x.key+": "+x.denied, maxW, th.G.Ellipsis))
			deniedKeys = append(deniedKeys, x.key)
		}
	}
	extra := 0 // the lines of the not-allowed section
	if len(denied) > 0 {
		extra = len(denied) + 2
	}
	availRows := max(s.h-9-extra, 4)
	cols := clamp((len(s.hints)+availRows-1)/availRows, 1, 3)
	rows := (len(s.hints) + cols - 1) / cols
	share := (s.w - 8 - 3*(cols-1)) / cols
	kw, dw := make([]int, cols), make([]int, cols)
	for i, x := range s.hints {
		c := i / rows
		kw[c], dw[c] = max(kw[c], ansi.StringWidth(x.key)), max(dw[c], ansi.StringWidth(x.desc))
	}
	for c := range cols {
		dw[c] = clamp(share-kw[c]-1, 8, dw[c])
	}
	var b strings.Builder
	b.WriteString(th.Title.Render("Keys") + "\n\n")
	for r := range rows {
		var line strings.Builder
		for c := range cols {
			i := c*rows + r
			if i >= len(s.hints) {
				break
			}
			if s.hints[i].denied != "" { // greyed: this user may not
				line.WriteString(th.Dim.Render(fit(s.hints[i].key, kw[c], th.G.Ellipsis) + " " + fit(s.hints[i].desc, dw[c], th.G.Ellipsis)))
			} else {
				line.WriteString(th.Key.Render(fit(s.hints[i].key, kw[c], th.G.Ellipsis)) + " " + th.KeyDesc.Render(fit(s.hints[i].desc, dw[c], th.G.Ellipsis)))
			}
			if c < cols-1 {
				line.WriteString("   ")
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	if len(denied) > 0 && rows+extra > s.h-9 {
		// No room for a line per key: name them; pressing one says why.
		denied = []string{clip("  "+strings.Join(deniedKeys, ", ")+" (pressing one says why)", maxW, th.G.Ellipsis)}
		extra = 3
	}
	if len(denied) > 0 {
		b.WriteString("\n" + th.Bold.Render("Not allowed") + "\n")
		for _, l := range denied {
			b.WriteString(th.Dim.Render(l) + "\n")
		}
	}
	if s.h-rows-extra >= 9+len(navigationRules)+2 {
		b.WriteString("\n" + th.Bold.Render("Navigation") + "\n")
		for _, r := range navigationRules {
			b.WriteString(th.Dim.Render(clip("  "+r, maxW, th.G.Ellipsis)) + "\n")
		}
	}
	b.WriteString("\n" + th.Dim.Render("filter: text  state:error  kind:WebApp  ns:team-a") +
		"\n" + th.Dim.Render(clip("remap keys in $XDG_CONFIG_HOME/kroscope/config.yaml (kroscope config check)", maxW, th.G.Ellipsis)) +
		"\n" + th.Dim.Render("any key closes"))
	s.box = th.Dialog.Render(b.String())
}

func helpActions() []action {
	closeHelp := func(m *Model) tea.Cmd { m.pop(); return nil }
	return []action{
		{name: "help", keys: []string{"?"}, help: "close the help", short: "close", do: closeHelp},
		{name: "back", keys: []string{"esc"}, help: "close the help", short: "close", do: closeHelp},
		{name: "forceQuit", keys: []string{"ctrl+c"}, help: "quit from anywhere", do: (*Model).quit},
	}
}
