package tui

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/kroscope/kroscope/engine/state"
)

// An action is one thing a key can do, as data bound to the method of the
// screen that offers it (k9s's views bind their actions the same way):
// each screen declares its actions over its own methods, and its key
// dispatch, its footer, its `?` help and the names the config file accepts
// are all read from those declarations, so the four never drift. Actions
// that share a name share their keys: "up" is rebound everywhere at once.
type action struct {
	name  string        // config name
	keys  []string      // default keys, as Bubble Tea spells them
	help  string        // the ? help's description
	short string        // the footer's label; "" keeps the action out of the footer
	label func() string // when set, the footer's label now (short still says whether it shows)
	when  func() bool
	// denied, when set, says why this user may not do it now ("" when
	// allowed), from the snapshot's capabilities: the footer and help show
	// the action greyed with the reason, and its key flashes the reason
	// instead of calling the engine.
	denied func() string
	do     func() tea.Cmd
}

// shared are the actions more than one screen offers: their names and
// default keys are declared here once; a screen offers one with share,
// giving its own words and behaviour. A test fails on a name two screens
// declare apart.
var shared = map[string][]string{
	// every screen: the root's
	"help": {"?"}, "quit": {"q"}, "forceQuit": {"ctrl+c"}, "command": {":"},
	// going back and confirming
	"back": {"esc"}, "confirm": {"enter"}, "open": {"enter"},
	// tables and scrolled panes
	"filter": {"/"}, "up": {"up", "k"}, "down": {"down", "j"}, "pageUp": {"pgup", "ctrl+u"},
	"pageDown": {"pgdown", "ctrl+f"}, "top": {"home", "g"}, "bottom": {"end", "G"},
	"scrollUp": {"K"}, "scrollDown": {"J"}, "sort": {"s"}, "sortName": {"N"}, "sortState": {"S"}, "sortKind": {"K"},
	// tabs
	"nextView": {"]", "tab"}, "prevView": {"[", "shift+tab"}, "yaml": {"y"},
	// an instance, from the list or its own screen
	"requeue": {"r"}, "delete": {"ctrl+d"}, "edit": {"E"}, "nextError": {"e"}, "history": {"H"},
	"timeline": {"t"}, "instance": {"i", "d"}, "instanceLogs": {"l"}, "logs": {"L"},
	// a graph, from the graphs list or its own screen
	"graphInstances": {"i"},
}

// share is the shared action name, with the screen's words and behaviour.
func share(name, help, short string, do func() tea.Cmd) action {
	keys, ok := shared[name]
	if !ok {
		panic("tui: " + name + " is not a shared action")
	}
	return action{name: name, keys: keys, help: help, short: short, do: do}
}

// withheld takes actions out of every declaration at once (tests prove
// that removing one removes it from dispatch, footer, help and config).
var withheld map[string]bool

// offer is how every screen hands over its declarations.
func offer(acts ...action) []action {
	if len(withheld) == 0 {
		return acts
	}
	return slices.DeleteFunc(acts, func(a action) bool { return withheld[a.name] })
}

// do0 adapts a method without a command to an action's do.
func do0(f func()) func() tea.Cmd { return func() tea.Cmd { f(); return nil } }

// keyset is the actions that share the keyboard on one screen (in one
// state of it): a key may do one thing there.
type keyset struct {
	name string
	acts []action
}

// keysets are every screen's declarations, from a prototype of each: the
// config's names, default keys and conflicts, and the "works elsewhere"
// flash, read them.
func keysets() []keyset {
	c := &common{keys: &keymap{keys: map[string][]string{}}, host: &host{}}
	root := &Model{c: c}
	g := root.globalActions()
	with := func(own []action) []action { return append(slices.Clone(own), g...) }
	force := func(own []action) []action {
		return append(slices.Clone(own), slices.DeleteFunc(slices.Clone(g), func(a action) bool { return a.name != "forceQuit" })...)
	}
	list := newInstancesScreen(c)
	graphs := newGraphsScreen(c)
	return []keyset{
		{"instances", with(list.acts)}, {"filter", force(list.table.filterActs)},
		{"instance", with(newInstanceScreen(c, state.InstanceKey{}).acts)},
		{"dialog", force((&dialogScreen{c: c}).actions())}, {"help", force(newHelpScreen(c, nil, nil).acts)},
		{"startup", force(root.startupActions())}, {"command", force(root.commandActions())},
		{"graphs", with(graphs.acts)}, {"graph", with(newGraphScreen(c, "").acts)},
		{"graphs filter", force(graphs.table.filterActs)}, {"plan", with(newPlanScreen(c, "", nil).acts)},
	}
}

// ActionNames lists the action names the config file accepts.
func ActionNames() []string {
	seen := map[string]bool{}
	for _, ks := range keysets() {
		for _, a := range ks.acts {
			seen[a.name] = true
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// defaultKeys is every action's default keys by name.
func defaultKeys() map[string][]string {
	out := map[string][]string{}
	for _, ks := range keysets() {
		for _, a := range ks.acts {
			if _, ok := out[a.name]; !ok {
				out[a.name] = a.keys
			}
		}
	}
	return out
}

// keymap is the resolved keys of every action name.
type keymap struct {
	keys  map[string][]string
	ascii bool
}

func newKeymap(remap map[string][]string, ascii bool) *keymap {
	k := &keymap{keys: defaultKeys(), ascii: ascii}
	for n, ks := range remap {
		if _, ok := k.keys[n]; ok && len(ks) > 0 {
			k.keys[n] = ks
		}
	}
	return k
}

func (k *keymap) matches(name, pressed string) bool { return slices.Contains(k.keys[name], pressed) }

// label is the keys of an action for the footer and help: "f5/r".
func (k *keymap) label(name string) string {
	ks := k.keys[name]
	out := make([]string, len(ks))
	for i, s := range ks {
		out[i] = keyLabel(s, k.ascii)
	}
	return strings.Join(out, "/")
}

// available reports whether a can run now.
func (a *action) available() bool { return a.when == nil || a.when() }

// deniedWhy is why this user may not run a now, or "".
func (a *action) deniedWhy() string {
	if a.denied == nil {
		return ""
	}
	return a.denied()
}

// bound is the first available action of acts the key is bound to, or nil.
func (k *keymap) bound(acts []action, pressed string) *action {
	for i := range acts {
		if a := &acts[i]; k.matches(a.name, pressed) && a.available() {
			return a
		}
	}
	return nil
}

// hint is one footer or help entry; denied, when set, shows it greyed
// with the reason.
type hint struct {
	key, desc, denied string
	section           string // set: a heading of the help, not a key
}

// footerHints are the footer entries of acts, in declaration order.
func (k *keymap) footerHints(acts []action) []hint {
	var out []hint
	for i := range acts {
		a := &acts[i]
		if a.short != "" && a.available() && len(k.keys[a.name]) > 0 {
			short := a.short
			if a.label != nil {
				short = a.label()
			}
			out = append(out, hint{key: k.label(a.name), desc: short, denied: a.deniedWhy()})
		}
	}
	return out
}

// helpHints are the help entries of acts: every action that can run
// there, whether or not the footer has room for it.
func (k *keymap) helpHints(acts []action) []hint {
	var out []hint
	seen := map[string]bool{}
	for i := range acts {
		a := &acts[i]
		if seen[a.name] || a.help == "" {
			continue
		}
		seen[a.name] = true
		h := hint{key: k.label(a.name), desc: a.help}
		if why := a.deniedWhy(); why != "" {
			h.denied = why
			h.desc += " (not allowed)"
		}
		out = append(out, h)
	}
	return out
}

// checkKeys validates a config's keys section: known action names, and key
// names a terminal can send. It returns the usable entries, normalised, and
// one problem per bad entry (keyed by action name for line lookup).
func checkKeys(in map[string][]string) (map[string][]string, map[string]string) {
	known := ActionNames()
	ok := map[string][]string{}
	bad := map[string]string{}
	for n, ks := range in {
		if !slices.Contains(known, n) {
			bad[n] = fmt.Sprintf("keys.%s: unknown action (known: %s)", n, strings.Join(known, ", "))
			continue
		}
		if len(ks) == 0 {
			bad[n] = fmt.Sprintf("keys.%s: no keys given", n)
			continue
		}
		var norm []string
		for _, s := range ks {
			k, err := normaliseKey(s)
			if err != nil {
				bad[n] = fmt.Sprintf("keys.%s: %v", n, err)
				break
			}
			norm = append(norm, k)
		}
		if _, isBad := bad[n]; !isBad {
			ok[n] = norm
		}
	}
	return ok, bad
}

// conflicts reports, for each remapped action, a key it now shares with
// another action of the same screen.
func conflicts(remap map[string][]string) map[string]string {
	keys := defaultKeys()
	for n, ks := range remap {
		keys[n] = ks
	}
	out := map[string]string{}
	sets := keysets()
	sort.Slice(sets, func(i, j int) bool { return sets[i].name < sets[j].name })
	for _, ks := range sets {
		owner := map[string]string{}
		for _, a := range ks.acts {
			for _, k := range keys[a.name] {
				o, dup := owner[k]
				if !dup || o == a.name {
					owner[k] = a.name
					continue
				}
				for _, n := range []string{a.name, o} {
					if _, remapped := remap[n]; remapped {
						other := o
						if n == o {
							other = a.name
						}
						if _, done := out[n]; !done {
							out[n] = fmt.Sprintf("keys.%s: %q is also %s's key on the %s screen", n, k, other, ks.name)
						}
					}
				}
			}
		}
	}
	return out
}

// elsewhere names the other screens a key may belong to, and how to get
// there, nearest first.
var elsewhere = map[string][]struct{ other, where string }{
	"instances": {{"instance", "on an instance (enter opens one)"}},
	"instance":  {{"instances", "on the instance list (esc goes back)"}},
	"graphs": {{"graph", "on a graph (enter opens one)"},
		{"instances", "on the instances (i lists them)"},
		{"instance", "on an instance (i, then enter)"}},
	"plan": {{"instances", "on the instance list (esc goes back)"},
		{"instance", "on an instance (esc, then enter)"}},
	"plan diff": {{"plan", "on the blast radius (esc goes back)"},
		{"instances", "on the instance list (esc twice)"}},
	"graph": {{"graphs", "on the graphs (esc goes back)"},
		{"instances", "on the instances (i lists them)"},
		{"instance", "on an instance (i, then enter)"}},
}

// whyNot is what the flash says when a key does nothing on the screen
// here (acts: its actions): that there is nothing for it to act on, that
// it works on the other screen, or that it is no key here at all.
func (k *keymap) whyNot(key, here string, acts []action) string {
	label := keyLabel(key, k.ascii)
	for i := range acts {
		if a := &acts[i]; k.matches(a.name, key) {
			if a.name == "back" {
				return label + ": nothing to go back from (q quits)"
			}
			return fmt.Sprintf("%s has nothing to act on here (%s)", label, a.help)
		}
	}
	if len(elsewhere[here]) == 0 {
		return ""
	}
	sets := map[string][]action{}
	for _, ks := range keysets() {
		sets[ks.name] = ks.acts
	}
	for _, e := range elsewhere[here] {
		for i := range sets[e.other] {
			if a := &sets[e.other][i]; k.matches(a.name, key) {
				return fmt.Sprintf("%s works %s: %s", label, e.where, a.help)
			}
		}
	}
	return fmt.Sprintf("%s does nothing here: ? lists this screen's keys", label)
}
