package tui

import (
	"fmt"
	"sort"
	"strings"

	"charm.land/bubbles/v2/key"
)

// KeyMap is every key kroscope reacts to. Dispatch and the help screen both
// read it, and the config file can rebind any entry by its name.
type KeyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom  key.Binding
	Open, Back, Tab, NextTab, PrevTab        key.Binding
	Requeue, RequeueAll, Delete              key.Binding
	NextError, YAML, History, Timeline, Logs key.Binding
	Filter, Sort, Reveal, Help, Quit         key.Binding
	Confirm, Left, Right                     key.Binding
}

// DefaultKeyMap returns the built-in bindings.
func DefaultKeyMap() KeyMap {
	b := func(keys []string, help, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return KeyMap{
		Up:         b([]string{"up", "k"}, "↑/k", "up"),
		Down:       b([]string{"down", "j"}, "↓/j", "down"),
		PageUp:     b([]string{"pgup", "ctrl+u"}, "pgup", "page up"),
		PageDown:   b([]string{"pgdown", "ctrl+f"}, "pgdn", "page down"),
		Top:        b([]string{"home", "g"}, "g", "top"),
		Bottom:     b([]string{"end", "G"}, "G", "bottom"),
		Open:       b([]string{"enter"}, "enter", "open"),
		Back:       b([]string{"esc"}, "esc", "back"),
		Tab:        b([]string{"tab"}, "tab", "switch pane"),
		NextTab:    b([]string{"]"}, "]", "next view"),
		PrevTab:    b([]string{"["}, "[", "previous view"),
		Requeue:    b([]string{"r"}, "r", "requeue"),
		RequeueAll: b([]string{"R"}, "R", "requeue all shown"),
		Delete:     b([]string{"ctrl+d"}, "ctrl+d", "delete"),
		NextError:  b([]string{"e"}, "e", "next error"),
		YAML:       b([]string{"y"}, "y", "yaml/diff"),
		History:    b([]string{"H"}, "H", "history"),
		Timeline:   b([]string{"t"}, "t", "timeline"),
		Logs:       b([]string{"L"}, "L", "logs"),
		Filter:     b([]string{"/"}, "/", "filter"),
		Sort:       b([]string{"s"}, "s", "sort"),
		Reveal:     b([]string{"x"}, "x", "reveal secret"),
		Help:       b([]string{"?"}, "?", "help"),
		Quit:       b([]string{"q", "ctrl+c"}, "q", "quit"),
		Confirm:    b([]string{"enter"}, "enter", "choose"),
		Left:       b([]string{"left", "h", "shift+tab"}, "←", "left"),
		Right:      b([]string{"right", "l", "tab"}, "→", "right"),
	}
}

// asciiHelp replaces arrows in the help texts for --ascii.
func (k *KeyMap) asciiHelp() {
	r := strings.NewReplacer("↑", "up", "↓", "down", "←", "left", "→", "right")
	for _, b := range k.bindings() {
		h := b.Help()
		b.SetHelp(r.Replace(h.Key), h.Desc)
	}
}

// bindings names each binding as the config file spells it.
func (k *KeyMap) bindings() map[string]*key.Binding {
	return map[string]*key.Binding{
		"up": &k.Up, "down": &k.Down, "pageUp": &k.PageUp, "pageDown": &k.PageDown,
		"top": &k.Top, "bottom": &k.Bottom, "open": &k.Open, "back": &k.Back, "tab": &k.Tab,
		"nextView": &k.NextTab, "prevView": &k.PrevTab, "requeue": &k.Requeue,
		"requeueAll": &k.RequeueAll, "delete": &k.Delete, "nextError": &k.NextError,
		"yaml": &k.YAML, "history": &k.History, "timeline": &k.Timeline, "logs": &k.Logs,
		"filter": &k.Filter, "sort": &k.Sort, "reveal": &k.Reveal, "help": &k.Help,
		"quit": &k.Quit, "confirm": &k.Confirm, "left": &k.Left, "right": &k.Right,
	}
}

// KeyNames lists the action names the config file accepts.
func KeyNames() []string {
	var k KeyMap
	names := make([]string, 0, 32)
	for n := range k.bindings() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Remap rebinds actions: name → keys (as Bubble Tea spells them, e.g.
// "ctrl+x", "F5"). Unknown names and empty key lists are errors.
func (k *KeyMap) Remap(m map[string][]string) error {
	bs := k.bindings()
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b, ok := bs[n]
		if !ok {
			return fmt.Errorf("keys.%s: unknown action (known: %s)", n, strings.Join(KeyNames(), ", "))
		}
		keys := m[n]
		if len(keys) == 0 {
			return fmt.Errorf("keys.%s: no keys given", n)
		}
		for _, s := range keys {
			if strings.TrimSpace(s) == "" {
				return fmt.Errorf("keys.%s: empty key", n)
			}
		}
		b.SetKeys(keys...)
		b.SetHelp(strings.Join(keys, "/"), b.Help().Desc)
	}
	return nil
}

// ShortHelp is the one-line help of the instances screen.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Open, k.Filter, k.Requeue, k.Delete, k.NextError, k.Help, k.Quit}
}

// FullHelp is the help screen, in columns.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Open, k.Back, k.Tab, k.NextTab, k.PrevTab, k.Filter, k.Sort},
		{k.Requeue, k.RequeueAll, k.Delete, k.NextError, k.Reveal},
		{k.YAML, k.History, k.Timeline, k.Logs, k.Help, k.Quit},
	}
}
