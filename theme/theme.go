// Package theme is the one place for kroscope's palette, styles and the
// state → glyph/colour map. Screens never build colours themselves: they ask
// a Theme, so light, dark, high-contrast, NO_COLOR and ASCII stay consistent.
package theme

import (
	"fmt"
	"image/color"
	"slices"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/kroscope/kroscope/engine/state"
)

// Names of the built-in themes. Auto picks Dark or Light from the terminal's
// background.
const (
	Auto         = "auto"
	Dark         = "dark"
	Light        = "light"
	HighContrast = "high-contrast"
)

// Names lists the themes a user may choose.
func Names() []string { return []string{Auto, Dark, Light, HighContrast} }

// Palette is the set of colours a theme is built from. A nil colour means
// "terminal default".
type Palette struct {
	Fg, Dim, Subtle, Accent  color.Color
	Green, Blue, Yellow, Red color.Color
	Magenta, Grey            color.Color
	SelectedFg, SelectedBg   color.Color
	LoudFg, LoudBg           color.Color
	BarFg                    color.Color
}

func darkPalette() Palette  { return hexPalette(false) }
func lightPalette() Palette { return hexPalette(true) }

// hexPalette builds the dark or the light palette from one table: each
// colour's dark and light values side by side, so the two stay in step.
func hexPalette(light bool) Palette {
	c := func(dark, lightHex string) color.Color {
		if light {
			return lipgloss.Color(lightHex)
		}
		return lipgloss.Color(dark)
	}
	return Palette{
		Fg: c("#E4E4E4", "#1C1C1C"), Dim: c("#8A8A8A", "#6C6C6C"), Subtle: c("#4E4E4E", "#BCBCBC"),
		Accent: c("#87AFFF", "#005FAF"),
		Green:  c("#5FD787", "#008700"), Blue: c("#5FAFFF", "#005FD7"), Yellow: c("#FFD75F", "#AF8700"),
		Red: c("#FF5F5F", "#D70000"), Magenta: c("#D787FF", "#AF00AF"), Grey: c("#9E9E9E", "#767676"),
		SelectedFg: c("#FFFFFF", "#000000"), SelectedBg: c("#3A3A5A", "#D7D7FF"),
		LoudFg: c("#FFFFFF", "#FFFFFF"), LoudBg: c("#AF0000", "#D70000"),
		BarFg: c("#5FAFFF", "#005FD7"),
	}
}

// highContrastPalette uses the 16 basic ANSI colours at full intensity, which
// every terminal maps to its own readable values, and a reverse-video cursor.
func highContrastPalette() Palette {
	return Palette{
		Fg: lipgloss.BrightWhite, Dim: lipgloss.White, Subtle: lipgloss.White, Accent: lipgloss.BrightCyan,
		Green: lipgloss.BrightGreen, Blue: lipgloss.BrightCyan, Yellow: lipgloss.BrightYellow,
		Red: lipgloss.BrightRed, Magenta: lipgloss.BrightMagenta, Grey: lipgloss.White,
		SelectedFg: lipgloss.Black, SelectedBg: lipgloss.BrightWhite,
		LoudFg: lipgloss.BrightWhite, LoudBg: lipgloss.Red,
		BarFg: lipgloss.BrightCyan,
	}
}

// Glyphs are every non-letter character the UI draws, so --ascii can replace
// them all at once.
type Glyphs struct {
	Synced, Waiting, Pending, Skipped, Error, Deleting, Suspended, Unknown string
	SortUp, SortDown                                                       string
	Spinner                                                                []string
	Cursor, Ellipsis, Arrow, Sep, Warn, Dot                                string
	TreeBranch, TreeLast, TreeVert, TreeSpace                              string
	BarFull, BarEmpty, BarTick                                             string
	Border                                                                 lipgloss.Border
}

// UnicodeGlyphs are the default glyphs.
var UnicodeGlyphs = Glyphs{
	Synced: "✓", Waiting: "◐", Pending: "○", Skipped: "⊘", Error: "✗", Deleting: "⊖", Suspended: "‖", Unknown: "?",
	SortUp: "↑", SortDown: "↓",
	Spinner: []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"},
	Cursor:  "▸", Ellipsis: "…", Arrow: "→", Sep: "│", Warn: "⚠", Dot: "●",
	TreeBranch: "├─ ", TreeLast: "└─ ", TreeVert: "│  ", TreeSpace: "   ",
	BarFull: "█", BarEmpty: "·", BarTick: "┊",
	Border: lipgloss.RoundedBorder(),
}

// ASCIIGlyphs replace every glyph with plain ASCII.
var ASCIIGlyphs = Glyphs{
	Synced: "+", Waiting: "~", Pending: ".", Skipped: "/", Error: "X", Deleting: "D", Suspended: "=", Unknown: "?",
	SortUp: "^", SortDown: "v",
	Spinner: []string{"|", "/", "-", "\\"},
	Cursor:  ">", Ellipsis: "...", Arrow: "->", Sep: "|", Warn: "!", Dot: "*",
	TreeBranch: "|- ", TreeLast: "`- ", TreeVert: "|  ", TreeSpace: "   ",
	BarFull: "#", BarEmpty: ".", BarTick: ":",
	Border: lipgloss.ASCIIBorder(),
}

// Class is what a state means (engine/state owns the map from states to
// classes); the theme only gives each class a glyph and a colour.
type Class = state.Class

// Classes lists every class in display order.
var Classes = state.Classes

// Theme holds the resolved styles. Build one with New; it is read-only after.
type Theme struct {
	Name    string
	NoColor bool
	ASCII   bool
	// Marks: no attribute can be drawn (TERM=dumb): what is selected or
	// chosen carries a text mark (Choice, the tables' cursor column).
	Marks bool
	G     Glyphs
	P     Palette

	Title, Header, Selected, Dim, Bold, Accent   lipgloss.Style
	FlashOK, FlashErr, Loud, Key, KeyDesc        lipgloss.Style
	Box, Dialog, DiffAdd, DiffDel, DiffHunk, Bar lipgloss.Style
	ButtonOn, ButtonOff, Label, Warn             lipgloss.Style
	class                                        [state.NumClasses]lipgloss.Style
}

// Options choose a theme.
type Options struct {
	Name    string // one of Names(); "" is Auto
	IsDark  bool   // terminal background, used by Auto
	NoColor bool   // NO_COLOR: attributes (bold, reverse) only
	ASCII   bool
	// Marks: the terminal draws no attribute at all (TERM=dumb, where even
	// reverse video is stripped): selections are marked in text too.
	Marks bool
}

// New builds a theme, or says which names exist.
func New(o Options) (*Theme, error) {
	name := o.Name
	if name == "" {
		name = Auto
	}
	var p Palette
	switch name {
	case Auto:
		if o.IsDark {
			p = darkPalette()
		} else {
			p = lightPalette()
		}
	case Dark:
		p = darkPalette()
	case Light:
		p = lightPalette()
	case HighContrast:
		p = highContrastPalette()
	default:
		return nil, fmt.Errorf("unknown theme %q (known: %s)", o.Name, strings.Join(Names(), ", "))
	}
	if o.NoColor {
		p = Palette{}
	}
	t := &Theme{Name: name, NoColor: o.NoColor, ASCII: o.ASCII, Marks: o.Marks, G: UnicodeGlyphs, P: p}
	if o.ASCII {
		t.G = ASCIIGlyphs
	}
	fg := func(c color.Color) lipgloss.Style {
		s := lipgloss.NewStyle()
		if c != nil {
			s = s.Foreground(c)
		}
		return s
	}
	t.Title = fg(p.Accent).Bold(true)
	t.Header = fg(p.Dim).Bold(true)
	t.Dim = fg(p.Dim)
	t.Bold = lipgloss.NewStyle().Bold(true)
	t.Accent = fg(p.Accent)
	if o.NoColor || name == HighContrast {
		// Without colours (or for maximum contrast) the cursor is reverse video.
		t.Selected = lipgloss.NewStyle().Reverse(true)
		if name == HighContrast && !o.NoColor {
			t.Selected = t.Selected.Bold(true)
		}
	} else {
		t.Selected = lipgloss.NewStyle().Foreground(p.SelectedFg).Background(p.SelectedBg).Bold(true)
	}
	t.FlashOK = fg(p.Green)
	t.FlashErr = fg(p.Red).Bold(true)
	t.Loud = lipgloss.NewStyle().Bold(true)
	if o.NoColor {
		t.Loud = t.Loud.Reverse(true)
	} else {
		t.Loud = t.Loud.Foreground(p.LoudFg).Background(p.LoudBg)
	}
	t.Key = fg(p.Accent).Bold(true)
	t.KeyDesc = fg(p.Dim)
	t.Box = lipgloss.NewStyle().Border(t.G.Border).BorderForeground(p.Subtle)
	if p.Subtle == nil {
		t.Box = lipgloss.NewStyle().Border(t.G.Border)
	}
	t.Dialog = lipgloss.NewStyle().Border(t.G.Border).Padding(0, 1)
	if p.Accent != nil {
		t.Dialog = t.Dialog.BorderForeground(p.Accent)
	}
	t.DiffAdd = fg(p.Green)
	t.DiffDel = fg(p.Red)
	t.DiffHunk = fg(p.Accent)
	t.Bar = fg(p.BarFg)
	t.ButtonOff = lipgloss.NewStyle().Padding(0, 1)
	t.ButtonOn = t.Selected.Padding(0, 1)
	t.Label = fg(p.Dim)
	t.Warn = fg(p.Yellow).Bold(true)
	t.class = [state.NumClasses]lipgloss.Style{
		state.ClassOK: fg(p.Green), state.ClassProgressing: fg(p.Blue), state.ClassWaiting: fg(p.Yellow),
		state.ClassPending: fg(p.Dim), state.ClassSkipped: fg(p.Grey), state.ClassFailed: fg(p.Red).Bold(true),
		state.ClassDeleting: fg(p.Magenta), state.ClassSuspended: fg(p.Grey), state.ClassUnknown: fg(p.Grey),
	}
	return t, nil
}

// Must is New for built-in names known to be valid.
func Must(o Options) *Theme {
	t, err := New(o)
	if err != nil {
		panic(err)
	}
	return t
}

// Valid reports whether name is a theme name.
func Valid(name string) bool { return name == "" || slices.Contains(Names(), name) }

// Style returns the colour style of a state (by its class).
func (t *Theme) Style(st string) lipgloss.Style { return t.ClassStyle(state.Phase(st).Class()) }

// ClassStyle returns the colour style of a class.
func (t *Theme) ClassStyle(c Class) lipgloss.Style {
	if c < 0 || int(c) >= len(t.class) {
		c = state.ClassUnknown
	}
	return t.class[c]
}

// Glyph returns the unstyled glyph of a state; frame picks the shared
// spinner's frame for states in progress.
func (t *Theme) Glyph(st string, frame int) string {
	return t.ClassGlyph(state.Phase(st).Class(), frame)
}

// ClassGlyph returns the unstyled glyph of a class.
func (t *Theme) ClassGlyph(c Class, frame int) string {
	g := &t.G
	if c == state.ClassProgressing {
		n := len(g.Spinner)
		return g.Spinner[((frame%n)+n)%n]
	}
	// One table, as for the class styles in New.
	byClass := [state.NumClasses]string{
		state.ClassOK: g.Synced, state.ClassWaiting: g.Waiting, state.ClassPending: g.Pending,
		state.ClassSkipped: g.Skipped, state.ClassFailed: g.Error, state.ClassDeleting: g.Deleting,
		state.ClassSuspended: g.Suspended, state.ClassUnknown: g.Unknown,
	}
	if c < 0 || int(c) >= len(byClass) {
		return g.Unknown
	}
	return byClass[c]
}

// State renders "glyph WORD" in the state's colour; word "" shows the
// glyph only.
func (t *Theme) State(st, word string, frame int) string {
	s := t.Glyph(st, frame)
	if word != "" {
		s += " " + word
	}
	return t.Style(st).Render(s)
}

// Choice renders one of a row of choices (a tab, a button): the chosen one
// in on, the others in off. With Marks the chosen one is also bracketed
// and the others padded to the same width, so the choice shows where no
// attribute can be drawn.
func (t *Theme) Choice(label string, chosen bool, on, off lipgloss.Style) string {
	switch {
	case t.Marks && chosen:
		return on.Render("[" + label + "]")
	case t.Marks:
		return off.Render(" " + label + " ")
	case chosen:
		return on.Render(label)
	}
	return off.Render(label)
}
