package tui

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// An action is one thing a key can do, as data (k9s keeps its key actions
// the same way): the tables below generate key dispatch, the footer, the
// `?` help and the names the config file accepts, so the four never drift.
// Actions of different panes that share a name share their keys: "up" is
// rebound everywhere at once.
type action struct {
	name  string   // config name
	keys  []string // default keys, as Bubble Tea spells them
	help  string   // the ? help's description
	short string   // the footer's label; "" keeps the action out of the footer
	when  func(m *Model) bool
	// denied, when set, says why this user may not do it now ("" when
	// allowed), from the snapshot's capabilities: the footer and help show
	// the action greyed with the reason, and its key flashes the reason
	// instead of calling the engine.
	denied func(m *Model) string
	do     func(m *Model) tea.Cmd
}

// pane names an action table: which keys work depends on what has the keyboard.
type pane int

const (
	paneGlobal    pane = iota // every screen (help, quit)
	paneInstances             // the instances table
	paneFilter                // typing a filter
	paneInstance              // one instance: graph and detail
	paneDialog                // a confirmation dialog
	paneHelp                  // the help overlay
	paneStartup               // the startup and fatal screens
	paneCommand               // typing a `:` command
	panePlan                  // a plan's blast radius (plan.go)
)

// actionTables is filled in init: the actions call methods that read it.
var actionTables map[pane][]action

// ActionNames lists the action names the config file accepts.
func ActionNames() []string {
	seen := map[string]bool{}
	for _, t := range actionTables {
		for _, a := range t {
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
	for _, t := range actionTables {
		for _, a := range t {
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
func (m *Model) available(a *action) bool { return a.when == nil || a.when(m) }

// deniedWhy is why this user may not run a now, or "".
func (m *Model) deniedWhy(a *action) string {
	if a.denied == nil {
		return ""
	}
	return a.denied(m)
}

// dispatch runs the first available action of the tables bound to the
// key; a denied one flashes why instead.
func (m *Model) dispatch(msg tea.KeyPressMsg, panes ...pane) (bool, tea.Cmd) {
	pressed := msg.String()
	for _, p := range panes {
		for i := range actionTables[p] {
			a := &actionTables[p][i]
			if m.keys().matches(a.name, pressed) && m.available(a) {
				if why := m.deniedWhy(a); why != "" {
					m.setFlash("not allowed: "+why, true)
					return true, nil
				}
				return true, a.do(m)
			}
		}
	}
	return false, nil
}

// hint is one footer or help entry; denied, when set, shows it greyed
// with the reason.
type hint struct{ key, desc, denied string }

// footerHints are the footer entries of the given tables, in table order.
func (m *Model) footerHints(panes ...pane) []hint {
	var out []hint
	for _, p := range panes {
		for i := range actionTables[p] {
			a := &actionTables[p][i]
			if a.short != "" && m.available(a) && len(m.keys().keys[a.name]) > 0 {
				out = append(out, hint{m.keys().label(a.name), a.short, m.deniedWhy(a)})
			}
		}
	}
	return out
}

// helpHints are the help entries of the given tables: every action that
// can run there, whether or not the footer has room for it.
func (m *Model) helpHints(panes ...pane) []hint {
	var out []hint
	seen := map[string]bool{}
	for _, p := range panes {
		for i := range actionTables[p] {
			a := &actionTables[p][i]
			if seen[a.name] || a.help == "" {
				continue
			}
			seen[a.name] = true
			h := hint{key: m.keys().label(a.name), desc: a.help}
			if why := m.deniedWhy(a); why != "" {
				h.denied = why
				h.desc += " (not allowed)"
			}
			out = append(out, h)
		}
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

// screenPanes are the tables that share the keyboard on each screen: a key
// may do one thing per screen.
var screenPanes = map[string][]pane{
	"instances": {paneInstances, paneGlobal}, "instance": {paneInstance, paneGlobal},
	"filter": {paneFilter}, "dialog": {paneDialog}, "help": {paneHelp}, "startup": {paneStartup}, "command": {paneCommand},
	"graphs": {paneGraphs, paneGlobal}, "graph": {paneGraph, paneGlobal}, "graphs filter": {paneGraphsFilter}, "plan": {panePlan},
}

// conflicts reports, for each remapped action, a key it now shares with
// another action of the same screen.
func conflicts(remap map[string][]string) map[string]string {
	keys := defaultKeys()
	for n, ks := range remap {
		keys[n] = ks
	}
	out := map[string]string{}
	scrs := make([]string, 0, len(screenPanes))
	for s := range screenPanes {
		scrs = append(scrs, s)
	}
	sort.Strings(scrs)
	for _, scr := range scrs {
		owner := map[string]string{}
		for _, p := range screenPanes[scr] {
			for _, a := range actionTables[p] {
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
								out[n] = fmt.Sprintf("keys.%s: %q is also %s's key on the %s screen", n, k, other, scr)
							}
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
var elsewhere = map[pane][]struct {
	other pane
	where string
}{
	paneInstances: {{paneInstance, "on an instance (enter opens one)"}},
	paneInstance:  {{paneInstances, "on the instance list (esc goes back)"}},
	paneGraphs: {{paneGraph, "on a graph (enter opens one)"},
		{paneInstances, "on the instances (i lists them)"},
		{paneInstance, "on an instance (i, then enter)"}},
	paneGraph: {{paneGraphs, "on the graphs (esc goes back)"},
		{paneInstances, "on the instances (i lists them)"},
		{paneInstance, "on an instance (i, then enter)"}},
}

// whyNot is what the flash says when a key does nothing on the screen
// here: that there is nothing for it to act on, that it works on the
// other screen, or that it is no key here at all.
func (m *Model) whyNot(key string, here pane) string {
	label := keyLabel(key, m.keys().ascii)
	for i := range actionTables[here] {
		if a := &actionTables[here][i]; m.keys().matches(a.name, key) {
			if a.name == "back" {
				return label + ": nothing to go back from (q quits)"
			}
			return fmt.Sprintf("%s has nothing to act on here (%s)", label, a.help)
		}
	}
	for _, e := range elsewhere[here] {
		for i := range actionTables[e.other] {
			if a := &actionTables[e.other][i]; m.keys().matches(a.name, key) {
				return fmt.Sprintf("%s works %s: %s", label, e.where, a.help)
			}
		}
	}
	return fmt.Sprintf("%s does nothing here: ? lists this screen's keys", label)
}
