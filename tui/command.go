package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kroscope/kroscope/engine/state"
)

// commandLine is the `:` prompt, as k9s users expect: `:kind WebApp` (or
// just `:webapp`), `:ns team-a`, `:graph NAME`, `:q`. tab completes kinds,
// namespaces and graph names; up and down walk the history.
type commandLine struct {
	c       *common
	active  bool
	input   textinput.Model
	history []string
	hist    int    // position while walking the history; len(history) is the new line
	hint    string // the candidates of the last tab
	line    string // drawn in prepare
}

func newCommandLine(c *common) commandLine {
	in := textinput.New()
	in.Prompt = ":"
	in.Placeholder = commandPlaceholder
	return commandLine{c: c, input: in}
}

const commandPlaceholder = "kind NAME, ns NAME, graph NAME, graphs, plan FILE, q (tab completes)"

// commandWords are the commands themselves, for completion.
var commandWords = []string{"kind", "ns", "graph", "graphs", "rgd", "plan", "q", "quit"}

func (c *commandLine) open(w int) tea.Cmd {
	c.active, c.hint, c.hist = true, "", len(c.history)
	c.input.SetValue("")
	c.input.SetWidth(max(w-2, 1))
	return c.input.Focus()
}

func (c *commandLine) close() {
	c.active = false
	c.input.Blur()
}

// edit types a key no action took into the line.
func (c *commandLine) edit(msg tea.KeyPressMsg) tea.Cmd {
	var cmd tea.Cmd
	c.input, cmd = c.input.Update(msg)
	c.hint = ""
	return cmd
}

// run runs the typed line and remembers it.
func (c *commandLine) run(snap *state.Snapshot) tea.Cmd {
	line := strings.TrimSpace(c.input.Value())
	c.close()
	if line == "" {
		return nil
	}
	if n := len(c.history); n == 0 || c.history[n-1] != line {
		c.history = append(c.history, line)
	}
	return c.execute(line, snap)
}

// execute does one command. `:kind` and `:graph` switch the list to that
// kind or graph (replacing the filter, keeping its namespace), `:ns` to
// that namespace (keeping the rest), as k9s switches views; the list comes
// to the front.
func (c *commandLine) execute(line string, snap *state.Snapshot) tea.Cmd {
	h := c.c.host
	f := strings.Fields(line)
	word, arg := strings.ToLower(f[0]), strings.Join(f[1:], " ")
	switch word {
	case "q", "q!", "quit":
		h.quit()
		return nil
	case "plan":
		return startPlan(c.c, arg)
	case "graphs", "rgd", "rgds", "resourcegraphdefinitions", "resourcegraphdefinition":
		cc := c.c
		h.raise(isGraphs, func() screen { return newGraphsScreen(cc) })
		if arg != "" {
			openGraph(cc, snap, arg)
		}
		return nil
	case "ns", "namespace":
		if arg == "all" || arg == "-A" {
			arg = ""
		}
		h.toList(switchMsg{"ns", arg})
		return nil
	case "kind", "graph":
		if arg == "" {
			h.flash(fmt.Sprintf(":%s needs a name (tab completes)", word), true)
			return nil
		}
		name := kindNamed(snap, arg)
		if word == "graph" {
			name = graphNamed(snap, arg)
		}
		if name == "" {
			h.flash(fmt.Sprintf("no %s %q is served (tab lists them)", word, arg), true)
			return nil
		}
		h.toList(switchMsg{word, name})
		return nil
	}
	// `:webapp`, `:WebApps`, `:webapps.kro.run`: a kind by any of its names.
	if k := kindNamed(snap, word); k != "" && arg == "" {
		h.toList(switchMsg{"kind", k})
		return nil
	}
	h.flash(fmt.Sprintf("unknown command %q: try :kind NAME, :ns NAME, :graph NAME, :graphs, :plan FILE or :q", line), true)
	return nil
}

// switchMsg asks the list for one kind, graph or namespace (value ""
// for every namespace).
type switchMsg struct{ key, value string }

// switchView shows the list of one kind, graph or namespace: a kind or
// graph replaces the filter but for its namespace; a namespace replaces
// only the namespace.
func (p *instancesScreen) switchView(key, value string) {
	var terms []string
	for _, t := range strings.Fields(p.table.query) {
		k, _, ok := strings.Cut(t, ":")
		isNS := ok && (k == "ns" || k == "namespace")
		if (key == "ns" && !isNS) || (key != "ns" && isNS) {
			terms = append(terms, t)
		}
	}
	if value != "" {
		terms = append(terms, key+":"+strings.ToLower(value))
	}
	p.table.filterTo(strings.Join(terms, " "))
	n := len(p.table.rows)
	p.c.host.flash(viewFlash(key, value, n, namespaces(p.snap)), n == 0 && key == "ns" && value != "")
}

// viewFlash says what a switch shows, and when a namespace has no
// instances, that it has none (and which do).
func viewFlash(key, value string, n int, namespaces []string) string {
	what := key + " " + value
	if key == "ns" && value == "" {
		what = "all namespaces"
	}
	if key == "ns" && value != "" && n == 0 && !slices.Contains(namespaces, value) {
		return fmt.Sprintf("namespace %s: no instances there (namespaces with instances: %s)", value, strings.Join(namespaces, ", "))
	}
	return what + ": " + plural(n, "instance")
}

// namespaces are those that have instances, sorted.
func namespaces(snap *state.Snapshot) []string {
	set := map[string]bool{}
	for _, in := range snap.Instances {
		set[in.Key.Namespace] = true
	}
	out := make([]string, 0, len(set))
	for ns := range set {
		out = append(out, ns)
	}
	sort.Strings(out)
	return out
}

// kindNamed finds the kind a word names: the kind, its plural resource or
// resource.group, case-insensitively; "" when none.
func kindNamed(snap *state.Snapshot, w string) string {
	w = strings.ToLower(w)
	for _, g := range snap.Graphs {
		plural, _, _ := strings.Cut(g.Resource, ".")
		if g.Kind != "" && (strings.ToLower(g.Kind) == w || strings.ToLower(g.Kind)+"s" == w || plural == w || g.Resource == w) {
			return strings.ToLower(g.Kind)
		}
	}
	return ""
}

// graphNamed finds the graph a word names: its full name, or a prefix of
// it or its kind when only one graph matches ("webapp" is
// webapp.kro.run); "" when none or several.
func graphNamed(snap *state.Snapshot, w string) string {
	var found []string
	for _, g := range snap.Graphs {
		if graphNames(strings.ToLower(w), g.Name, g.Kind) {
			if strings.EqualFold(g.Name, w) {
				return strings.ToLower(g.Name)
			}
			found = append(found, strings.ToLower(g.Name))
		}
	}
	if len(found) == 1 {
		return found[0]
	}
	return ""
}

// graphNames reports whether the word w (lower case) names the graph
// called name whose instances are kind: the name, a prefix of it, or the
// kind.
func graphNames(w, name, kind string) bool {
	name = strings.ToLower(name)
	return w != "" && (strings.HasPrefix(name, w) || w == strings.ToLower(kind))
}

// candidates are what the word being typed can complete to.
func candidates(snap *state.Snapshot, line string) (prefix string, words []string) {
	f := strings.Fields(line)
	trailing := strings.HasSuffix(line, " ")
	set := map[string]bool{}
	add := func(s string) {
		if s != "" {
			set[s] = true
		}
	}
	kinds := func() {
		for _, g := range snap.Graphs {
			add(strings.ToLower(g.Kind))
		}
	}
	switch {
	case len(f) == 0 || (len(f) == 1 && !trailing):
		for _, c := range commandWords {
			add(c)
		}
		kinds()
		if len(f) == 1 {
			prefix = f[0]
		}
	case len(f) <= 2:
		switch strings.ToLower(f[0]) {
		case "kind":
			kinds()
		case "ns", "namespace":
			for _, in := range snap.Instances {
				add(in.Key.Namespace)
			}
			add("all")
		case "graph", "graphs", "rgd":
			for _, g := range snap.Graphs {
				add(g.Name)
			}
		case "plan":
			prefix = ""
			if len(f) == 2 && !trailing {
				prefix = f[1]
			}
			return prefix, graphFiles(prefix)
		}
		if len(f) == 2 && !trailing {
			prefix = f[1]
		}
	}
	for s := range set {
		if strings.HasPrefix(strings.ToLower(s), strings.ToLower(prefix)) {
			words = append(words, s)
		}
	}
	sort.Strings(words)
	return prefix, words
}

// graphFiles are the paths :plan FILE can complete prefix to: folders
// (with a slash, to go on) and YAML files, hidden ones only when asked.
func graphFiles(prefix string) []string {
	matches, _ := filepath.Glob(globEscape(prefix) + "*")
	var out []string
	for _, p := range matches {
		base := filepath.Base(p)
		if strings.HasPrefix(base, ".") && !strings.HasPrefix(filepath.Base(prefix+"x"), ".") {
			continue
		}
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			out = append(out, p+"/")
		} else if ext := filepath.Ext(p); ext == ".yaml" || ext == ".yml" {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// globEscape keeps a typed path's glob characters literal.
func globEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`).Replace(s)
}

// complete extends the word being typed to the candidates' common prefix
// and lists them when several remain.
func (c *commandLine) complete(snap *state.Snapshot) tea.Cmd {
	line := c.input.Value()
	prefix, words := candidates(snap, line)
	c.hint = ""
	if len(words) == 0 {
		c.hint = "no completion"
		return nil
	}
	common := words[0]
	for _, w := range words[1:] {
		for !strings.HasPrefix(w, common) {
			common = common[:len(common)-1]
		}
	}
	next := strings.TrimSuffix(line, prefix) + common
	if len(words) == 1 && !strings.HasSuffix(common, "/") { // a folder goes on
		next += " "
	} else if len(words) > 1 {
		c.hint = strings.Join(words, " ")
	}
	c.input.SetValue(next)
	c.input.CursorEnd()
	return nil
}

// walkHistory shows an older (-1) or newer (+1) command.
func (c *commandLine) walkHistory(d int) tea.Cmd {
	if len(c.history) == 0 {
		return nil
	}
	c.hist = clamp(c.hist+d, 0, len(c.history))
	v := ""
	if c.hist < len(c.history) {
		v = c.history[c.hist]
	}
	c.input.SetValue(v)
	c.input.CursorEnd()
	return nil
}

// prepareCommand draws the prompt line (View only reads it).
func (c *commandLine) prepare(w int) {
	if !c.active {
		c.line = ""
		return
	}
	hint := ""
	c.input.Placeholder = commandPlaceholder
	if c.hint != "" {
		// The candidates take the hint's place: the placeholder would run
		// under them.
		c.input.Placeholder = ""
		hint = clip(c.hint, max(w-4-len(c.input.Value()), 1), c.c.th.G.Ellipsis)
	}
	// The input pads to its width: leave the hint its room.
	c.input.SetWidth(max(w-2-len(c.input.Prompt)-ansiWidth(hint)-2, len(c.input.Value())+1))
	line := c.input.View()
	if hint != "" {
		line = strings.TrimRight(line, " ") + "  " + c.c.th.Dim.Render(hint)
	}
	c.line = fit(line, w, c.c.th.G.Ellipsis)
}

func ansiWidth(s string) int { return ansi.StringWidth(s) }

// commandActions run while the `:` prompt has the keyboard; other keys edit
// the line.
func (m *Model) commandActions() []action {
	c := &m.cmd
	return offer(
		share("confirm", "run the command", "run", func() tea.Cmd { return c.run(m.snap) }),
		share("back", "close the prompt", "cancel", do0(c.close)),
		action{name: "complete", keys: []string{"tab"}, help: "complete a command, kind, namespace or graph", short: "complete",
			do: func() tea.Cmd { return c.complete(m.snap) }},
		action{name: "olderCommand", keys: []string{"up"}, help: "the previous command", short: "history", do: func() tea.Cmd { return c.walkHistory(-1) }},
		action{name: "newerCommand", keys: []string{"down"}, help: "the next command", do: func() tea.Cmd { return c.walkHistory(1) }},
	)
}

// graphMatch applies the filter's graph: terms (see parseQuery): a graph's
// name, a prefix of it or its instances' kind.
func graphMatch(graphs []string, in *state.Instance) bool {
	return len(graphs) == 0 || slices.ContainsFunc(graphs, func(g string) bool { return graphNames(g, in.Graph, in.Kind) })
}
