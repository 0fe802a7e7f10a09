package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// dialogScreen is a modal confirmation over the screen below. Cancel is the
// default choice; esc cancels.
type dialogScreen struct {
	boxed
	c       *common
	title   string
	lines   []string
	confirm string // the confirm button's label
	choice  int    // 0 cancel, 1 confirm
	onYes   func() tea.Cmd
	hint    string // the keys, in words (prepare)
}

// boxed is what the overlay boxes (a dialog, the help) keep and answer
// alike: their size, their actions and the box last drawn.
type boxed struct {
	screenDefaults
	acts []action
	w, h int
	box  string
}

func (b *boxed) SetSize(w, h int)           { b.w, b.h = w, h }
func (b *boxed) bindings() ([]action, bool) { return b.acts, false }
func (b *boxed) overlay() bool              { return true }
func (b *boxed) View() string               { return b.box }

// newDialog asks title; onYes runs when the user confirms.
func newDialog(c *common, title string, lines []string, confirm string, onYes func() tea.Cmd) *dialogScreen {
	d := &dialogScreen{c: c, title: title, lines: lines, confirm: confirm, onYes: onYes}
	d.acts = d.actions()
	return d
}

// Update: a key the dialog has no action for says so (the dialog is
// modal: it did nothing, without a word).
func (d *dialogScreen) Update(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		d.c.host.flash(keyLabel(k.String(), d.c.keys.ascii)+" does nothing in this dialog: "+d.hint, false)
	}
	return nil
}

func (d *dialogScreen) views() []string { return []string{viewDialog} }

func (d *dialogScreen) prepare() {
	th, k := d.c.th, d.c.keys
	// Everything wraps to the window (the border and padding take 4
	// cells): a warning cut at the box's edge could not be read, and the
	// box must never be wider than the window.
	maxW := max(d.w-6, 12)
	var body []string
	for _, l := range d.lines {
		body = append(body, wrap(l, maxW)...)
	}
	first := func(name string) string {
		if ks := k.keys[name]; len(ks) > 0 {
			return keyLabel(ks[0], k.ascii)
		}
		return "?"
	}
	// The footer's words: left and right choose, enter does it.
	d.hint = first("left") + "/" + first("right") + " choose, " + first("confirm") + " does it, " + first("back") + " cancels"
	hint := wrap(d.hint, maxW)
	title := wrap(d.title, maxW)
	// The body gets the rows the rest leaves (the border takes 2, the
	// blank lines around the body 2): the box must fit the window.
	limit := max(d.h-len(title)-len(hint)-5, 1)
	var b strings.Builder
	for _, l := range title {
		b.WriteString(th.Title.Render(l) + "\n")
	}
	b.WriteString("\n")
	for i, l := range body {
		if i == limit-1 && len(body) > limit {
			b.WriteString(fmt.Sprintf("%s and %d more lines\n", th.G.Ellipsis, len(body)-i))
			break
		}
		b.WriteString(l + "\n")
	}
	b.WriteString("\n" + th.Choice("Cancel", d.choice == 0, th.ButtonOn, th.ButtonOff) + "  " + th.Choice(d.confirm, d.choice == 1, th.ButtonOn, th.ButtonOff))
	for _, l := range hint {
		b.WriteString("\n" + th.Dim.Render(l))
	}
	d.box = th.Dialog.Render(b.String())
}

// actions lists enter and esc first: the help bar shows them in this
// order and cuts what does not fit, and at 60 columns those two were cut.
func (d *dialogScreen) actions() []action {
	return offer(
		share("confirm", "do what is chosen", "do it", d.decide),
		share("back", "cancel", "cancel", do0(func() { d.c.host.pop(); d.c.host.flash("cancelled", false) })),
		action{name: "left", keys: []string{"left", "h", "shift+tab"}, help: "choose Cancel", short: "choose Cancel",
			do: do0(func() { d.choice = 0 })},
		action{name: "right", keys: []string{"right", "l", "tab"}, help: "choose the action", short: "choose the action",
			do: do0(func() { d.choice = 1 })},
	)
}

// decide closes the dialog and does what is chosen.
func (d *dialogScreen) decide() tea.Cmd {
	d.c.host.pop()
	if d.choice == 1 {
		return d.onYes()
	}
	d.c.host.flash("cancelled", false)
	return nil
}
