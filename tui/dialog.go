package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// dialogScreen is a modal confirmation over the screen below. Cancel is the
// default choice; esc cancels.
type dialogScreen struct {
	c       *common
	title   string
	lines   []string
	confirm string // the confirm button's label
	choice  int    // 0 cancel, 1 confirm
	onYes   func(m *Model) tea.Cmd

	w, h int
	box  string
}

func (d *dialogScreen) Update(tea.Msg) tea.Cmd { return nil }
func (d *dialogScreen) SetSize(w, h int)       { d.w, d.h = w, h }
func (d *dialogScreen) pane() pane             { return paneDialog }
func (d *dialogScreen) overlay() bool          { return true }
func (d *dialogScreen) View() string           { return d.box }

func (d *dialogScreen) prepare() {
	th, k := d.c.th, d.c.keys
	maxW := max(d.w-8, 20)
	var b strings.Builder
	b.WriteString(th.Title.Render(clip(d.title, maxW, th.G.Ellipsis)))
	b.WriteString("\n\n")
	limit := max(d.h-10, 3)
	for i, l := range d.lines {
		if i == limit && len(d.lines) > limit+1 {
			b.WriteString(fmt.Sprintf("%s and %d more\n", th.G.Ellipsis, len(d.lines)-limit))
			break
		}
		b.WriteString(clip(l, maxW, th.G.Ellipsis) + "\n")
	}
	cancel, yes := th.ButtonOff, th.ButtonOff
	if d.choice == 0 {
		cancel = th.ButtonOn
	} else {
		yes = th.ButtonOn
	}
	b.WriteString("\n" + cancel.Render("Cancel") + "  " + yes.Render(d.confirm))
	first := func(name string) string {
		if ks := k.keys[name]; len(ks) > 0 {
			return keyLabel(ks[0], k.ascii)
		}
		return "?"
	}
	// The footer's words: left and right choose, enter does it.
	b.WriteString("\n" + th.Dim.Render(first("left")+"/"+first("right")+" choose, "+first("confirm")+" does it, "+first("back")+" cancels"))
	d.box = th.Dialog.Render(b.String())
}

// dialogActions lists enter and esc first: the help bar shows them in this
// order and cuts what does not fit, and at 60 columns those two were cut.
func dialogActions() []action {
	dlg := func(m *Model) *dialogScreen { return m.top().(*dialogScreen) }
	return []action{
		{name: "confirm", keys: []string{"enter"}, help: "do what is chosen", short: "do it",
			do: func(m *Model) tea.Cmd {
				d := dlg(m)
				m.pop()
				if d.choice == 1 {
					return d.onYes(m)
				}
				m.setFlash("cancelled", false)
				return nil
			}},
		{name: "back", keys: []string{"esc"}, help: "cancel", short: "cancel",
			do: func(m *Model) tea.Cmd { m.pop(); m.setFlash("cancelled", false); return nil }},
		{name: "left", keys: []string{"left", "h", "shift+tab"}, help: "choose Cancel", short: "choose Cancel",
			do: func(m *Model) tea.Cmd { dlg(m).choice = 0; return nil }},
		{name: "right", keys: []string{"right", "l", "tab"}, help: "choose the action", short: "choose the action",
			do: func(m *Model) tea.Cmd { dlg(m).choice = 1; return nil }},
		{name: "forceQuit", keys: []string{"ctrl+c"}, help: "quit from anywhere", do: (*Model).quit},
	}
}
