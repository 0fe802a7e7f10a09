package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/theme"
)

// sortKey is the instance list's order, as its table's sorts are
// numbered: the order s steps through them.
type sortKey int

const (
	sortName sortKey = iota
	sortState
	sortKind
	sortAge
	sortLast
	numSorts
)

// query is a parsed filter: free words match the name, namespace, kind or
// message; state:, kind: and ns: match one field each. All terms must match.
type query struct {
	words, states, kinds, nss, graphs []string
}

func parseQuery(s string) query {
	var q query
	for _, f := range strings.Fields(strings.ToLower(s)) {
		k, v, ok := strings.Cut(f, ":")
		switch {
		case ok && k == "state" && v != "":
			q.states = append(q.states, v)
		case ok && k == "kind" && v != "":
			q.kinds = append(q.kinds, v)
		case ok && (k == "ns" || k == "namespace") && v != "":
			q.nss = append(q.nss, v)
		case ok && k == "graph" && v != "":
			q.graphs = append(q.graphs, v)
		case ok && v == "" && slices.Contains([]string{"state", "kind", "ns", "namespace", "graph"}, k):
			// a term still being typed ("state:") narrows nothing yet:
			// as free text it matched no instance and blanked the list
		default:
			q.words = append(q.words, f)
		}
	}
	return q
}

// match reports whether an instance passes the filter. state: accepts a
// state (error, in_progress) or a class word (synced, progress, waiting...).
func (q query) match(in *state.Instance) bool {
	if len(q.states) > 0 {
		st := strings.ToLower(in.State)
		cl := state.Phase(in.State).Class().String()
		if !slices.ContainsFunc(q.states, func(s string) bool { return s == st || s == cl || classAlias[s] == cl }) {
			return false
		}
	}
	if len(q.kinds) > 0 && !slices.ContainsFunc(q.kinds, func(t string) bool { return kindTerm(t, in.Kind, in.Key.Resource) }) {
		return false
	}
	if len(q.nss) > 0 && !slices.Contains(q.nss, strings.ToLower(in.Key.Namespace)) {
		return false
	}
	if !graphMatch(q.graphs, in) {
		return false
	}
	if len(q.words) == 0 {
		return true
	}
	hay := strings.ToLower(in.Key.Namespace + "/" + in.Key.Name + " " + in.Kind + " " + in.Message)
	for _, w := range q.words {
		if !strings.Contains(hay, w) {
			return false
		}
	}
	return true
}

// viewScope is what the list shows, for the header: the namespace and
// the kind or graph its filter names ("" for all).
type viewScope struct{ ns, what string }

func (p *instancesScreen) scope1() viewScope {
	q := parseQuery(p.table.query)
	v := viewScope{ns: strings.Join(q.nss, ",")}
	switch {
	case len(q.graphs) > 0:
		v.what = "graph " + strings.Join(q.graphs, ",")
	case len(q.kinds) > 0:
		v.what = "kind " + strings.Join(kindNames(q.kinds, p.snap), ",")
	}
	return v
}

// kindNames spells the filter's kind terms (matched in lower case) as the
// graphs spell their kinds: ":kind webapp" shows "kind WebApp". A term no
// graph's kind is stays as typed.
func kindNames(terms []string, s *state.Snapshot) []string {
	out := slices.Clone(terms)
	if s == nil {
		return out
	}
	for i, t := range out {
		for _, g := range s.Graphs {
			if kindTerm(t, g.Kind, g.Resource) {
				out[i] = g.Kind
				break
			}
		}
	}
	return out
}

// kindTerm reports whether a kind: term (lower case, as the filter holds
// it) names kind, whose resource is "plural.group": the kind in any case,
// or the start of its resource ("webapps", "webapps.kro.run"). The filter
// and the header's spelling of it both ask here.
func kindTerm(term, kind, resource string) bool {
	return term == strings.ToLower(kind) || strings.HasPrefix(resource, term)
}

// classAlias lets state: take the words people type for a class.
var classAlias = map[string]string{"synced": "ok", "ready": "ok", "progress": "progressing", "error": "failed", "wait": "waiting"}

// instancesScreen is the instances table, its counts line and the log
// pane. It is always at the bottom of the screen stack.
type instancesScreen struct {
	screenDefaults
	c    *common
	snap *state.Snapshot
	acts []action

	table   *table[*state.Instance, state.InstanceKey, rowStamp]
	rowsFor rowsKey
	built   bool
	order   sortedRows // every instance in the table's order
	tally   phaseTally // the rows' phases, for the counts line

	showLogs bool

	w, h       int
	drawn      listKey
	lines      []string
	promptLine string
}

// rowsKey is what the filtered, sorted rows were built from.
type rowsKey struct {
	version uint64
	query   string
	sortBy  int
	desc    bool
}

// listKey is everything the drawn lines depend on.
type listKey struct {
	rows             rowsKey
	cursor, w, h     int
	frame            int
	now              int64 // seconds: the ago columns
	showLogs         bool
	logs             int
	th               *theme.Theme
	filtering        bool
	filterView, flag string
}

func newInstancesScreen(c *common) *instancesScreen {
	p := &instancesScreen{c: c, snap: &state.Snapshot{}}
	sorts := []tableSort{
		{"name", share("sortName", "sort by name", "", nil)},
		{"state", share("sortState", "sort by state, worst first", "", nil)},
		{"kind", share("sortKind", "sort by kind", "", nil)},
		{"age", action{name: "sortAge", keys: []string{"A"}, help: "sort by age"}},
		{"last reconcile", action{name: "sortReconciled", keys: []string{"O"}, help: "sort by last reconcile"}},
	}
	p.table = newTable[*state.Instance, state.InstanceKey, rowStamp](c, "text, state:error, kind:WebApp, ns:team-a, graph:webapp", p.columns(), sorts,
		func(in *state.Instance) state.InstanceKey { return in.Key }, p.rebuildRows)
	p.table.stamp = p.stamp
	p.acts = p.actions()
	return p
}

func (p *instancesScreen) bindings() ([]action, bool) {
	if p.table.typing {
		return p.table.filterActs, false
	}
	return p.acts, true
}

func (p *instancesScreen) scope() (viewScope, bool) { return p.scope1(), true }

func (p *instancesScreen) SetSize(w, h int) {
	p.w, p.h = w, h
	// The placeholder shows whole only with a width (bubbles draws just its
	// first letter otherwise).
	p.table.input.SetWidth(max(w-2, 1))
}

func (p *instancesScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case snapMsg:
		p.snap = msg.snap
		p.rebuildRows()
		return nil
	case switchMsg:
		p.switchView(msg.key, msg.value)
		return nil
	case graphListMsg:
		p.table.filterTo("graph:" + strings.ToLower(msg.name))
		p.c.host.flash("graph "+msg.name+": "+plural(len(p.table.rows), "instance"), false)
		return nil
	}
	if cmd, took := p.table.update(msg); took {
		return cmd
	}
	p.c.explain(msg, "instances", p.acts)
	return nil
}

func (p *instancesScreen) selected() *state.Instance {
	in, _ := p.table.selected()
	return in
}

// rebuildRows filters and sorts the instances when the snapshot, the filter
// or the order changed.
func (p *instancesScreen) rebuildRows() {
	t := p.table
	key := rowsKey{version: p.snap.Version, query: t.query, sortBy: t.sortBy, desc: t.desc}
	if p.built && key == p.rowsFor {
		return
	}
	p.order.update(p.snap, sortKey(t.sortBy), t.desc)
	q := parseQuery(t.query)
	rows := make([]*state.Instance, 0, len(p.order.all))
	for _, it := range p.order.all {
		if q.match(it.in) {
			rows = append(rows, it.in)
		}
	}
	p.rowsFor, p.built = key, true
	p.tally = tally(rows)
	t.setRows(rows)
}

// compareNames orders by namespace, then name, naturally (blog-7 before
// blog-69), then by resource.
func compareNames(a, b state.InstanceKey) int {
	if c := natural(a.Namespace, b.Namespace); c != 0 {
		return c
	}
	if c := natural(a.Name, b.Name); c != 0 {
		return c
	}
	return strings.Compare(a.Resource, b.Resource)
}

// natural compares strings with runs of digits compared as numbers.
func natural(a, b string) int {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if len(na) != len(nb) {
				return len(na) - len(nb)
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// rank orders states worst first: failed, waiting, deleting, progressing...
func rank(in *state.Instance) int {
	switch in.Phase().Class() {
	case state.ClassFailed:
		return 0
	case state.ClassWaiting:
		return 1
	case state.ClassDeleting:
		return 2
	case state.ClassProgressing:
		return 3
	case state.ClassPending:
		return 4
	case state.ClassSuspended:
		return 5
	case state.ClassUnknown:
		return 6
	}
	return 7
}

// columns are the instance list's, in order: adding one is one entry
// (and its goldens). The message takes what is left, the name two fifths
// of it; the reconcile columns show when there is room.
func (p *instancesScreen) columns() []column[*state.Instance] {
	el := func() string { return p.c.th.G.Ellipsis }
	fixed := func(n int) func() int { return func() int { return n } }
	wide := func(n int) func() int {
		return func() int {
			if p.w >= 100 {
				return n
			}
			return 0
		}
	}
	type I = *state.Instance
	return []column[I]{
		{header: "STATE", width: p.stateWidth, cell: p.stateCell, sort: 1 + int(sortState),
			style: func(in I, s string) string {
				if in.Unserved { // the last state seen: nobody reconciles it now
					return p.c.th.ClassStyle(state.ClassUnknown).Render(s)
				}
				return p.c.th.Style(in.State).Render(s)
			}},
		{header: "NAMESPACE/NAME", short: "NAME", flex: func(rest int) int { return clamp(rest*2/5, 12, 32) },
			cell: func(in I, w int) string { return shortName(in, w, el()) }, sort: 1 + int(sortName)},
		// Under 50 columns KIND gives way: READY then fits whole (cut,
		// "10/10" read "10", a count).
		{header: "KIND", width: func() int {
			if p.w < 50 {
				return 0
			}
			return 10 + 2*min(p.w/100, 1)
		}, cell: func(in I, _ int) string { return in.Kind }, sort: 1 + int(sortKind)},
		{header: "READY", width: fixed(5), cell: func(in I, _ int) string { r, t := in.ReadyCount(); return fmt.Sprintf("%d/%d", r, t) },
			style: func(in I, s string) string {
				if r, t := in.ReadyCount(); r < t && r > 0 {
					return p.c.th.Dim.Render(s)
				}
				return s
			}},
		{header: "AGE", width: fixed(4), cell: func(in I, _ int) string { return ageOf(p.c.now(), in.Created) }, sort: 1 + int(sortAge)},
		{header: "RECONCILED", width: wide(11), cell: func(in I, _ int) string { last, _ := p.lastReconcile(in); return last }, sort: 1 + int(sortLast)},
		{header: "TOOK", width: wide(7), cell: func(in I, _ int) string { _, took := p.lastReconcile(in); return took }},
		// The last reconcile, short, so O's column and arrow are there.
		{header: "LAST", width: func() int {
			if p.w < 100 && (p.w >= 70 || sortKey(p.table.sortBy) == sortLast) {
				return 5
			}
			return 0
		}, cell: func(in I, _ int) string { last, _ := p.lastReconcile(in); return strings.TrimSuffix(last, " ago") }, sort: 1 + int(sortLast)},
		{header: "MESSAGE", flex: func(rest int) int {
			if rest < 8 { // too narrow for a word: no header cut to "ME"
				return 0
			}
			return rest
		}, cell: func(in I, _ int) string { return p.message(in) },
			style: func(in I, s string) string {
				if in.Unserved {
					return p.c.th.Warn.UnsetBold().Render(s)
				}
				if in.Phase().Class() == state.ClassFailed {
					return p.c.th.ClassStyle(state.ClassFailed).UnsetBold().Render(s)
				}
				return s
			}},
	}
}

// stateWidth is as wide as the longest state shown, and as IN_PROGRESS
// at least, so the columns stay put as rows scroll, filter and change
// state; short words when the terminal is narrow.
func (p *instancesScreen) stateWidth() int {
	w := 2 + len(state.PhaseInProgress.Word())
	for _, in := range p.table.shown {
		w = max(w, 2+len(in.Phase().Word()))
	}
	if p.w < 60 {
		return min(w, 14)
	}
	return w
}

func (p *instancesScreen) stateCell(in *state.Instance, _ int) string {
	word := in.Phase().Word()
	if p.w < 60 {
		word = in.Phase().Short()
	}
	if in.Unserved {
		return p.c.th.G.Unknown + " " + word
	}
	return p.c.th.Glyph(in.State, p.frameOf(in)) + " " + word
}

// frameOf is the spinner frame an instance's glyph shows (in progress only).
func (p *instancesScreen) frameOf(in *state.Instance) int {
	if in.Phase().Class() == state.ClassProgressing {
		return p.c.frame
	}
	return 0
}

// lastReconcile is "4s ago" and how long it took, or "-".
func (p *instancesScreen) lastReconcile(in *state.Instance) (last, took string) {
	if in.LastReconcile.IsZero() {
		return "-", ""
	}
	return ageOf(p.c.now(), in.LastReconcile) + " ago", spaced(in.LastDuration)
}

// message is the row's MESSAGE: why nobody serves the instance, else
// its own message.
func (p *instancesScreen) message(in *state.Instance) string {
	if why := unservedWhy(p.snap, in); why != "" {
		return why
	}
	return rowMessage(in)
}

// unservedWhy says why nobody serves in now, from its graph's state (""
// while it is served): the instance is still stored in the cluster, and
// its state is the last one seen.
func unservedWhy(snap *state.Snapshot, in *state.Instance) string {
	if !in.Unserved {
		return ""
	}
	for i := range snap.Graphs {
		if g := &snap.Graphs[i]; g.Name == in.Graph {
			if why := refusal(g); why != "" {
				return "not served: " + why // the counts line names the graph
			}
			if !g.Served {
				return "not served: graph " + g.Name + " is starting"
			}
			return "not served: graph " + g.Name + " serves another kind now"
		}
	}
	return "not served: graph " + in.Graph + " is gone"
}

func rowMessage(in *state.Instance) string {
	msg := in.Message
	if msg == "" && in.Deleting {
		msg = "being deleted"
	}
	return strings.ReplaceAll(msg, "\n", " ")
}

// rowStamp is what one row's line depends on besides the columns and the
// theme: the instance's Version, the spinner frame (in progress) and the
// clock columns.
type rowStamp struct {
	version  uint64
	frame    int
	clock    string
	unserved string // its graph's state, which changes apart from the instance
}

func (p *instancesScreen) stamp(in *state.Instance) rowStamp {
	last, took := p.lastReconcile(in)
	return rowStamp{version: in.Version, frame: p.frameOf(in), clock: ageOf(p.c.now(), in.Created) + "|" + last + "|" + took,
		unserved: unservedWhy(p.snap, in)}
}

// shortName fits "namespace/name" into w cells by shortening the namespace
// first: the name is what tells rows apart.
func shortName(in *state.Instance, w int, el string) string {
	full := name(in)
	if ansi.StringWidth(full) <= w || in.Key.Namespace == "" {
		return full
	}
	avail := w - ansi.StringWidth(in.Key.Name) - 1
	if avail < ansi.StringWidth(el)+3 {
		return full // too narrow: plain truncation keeps the namespace start
	}
	return ansi.Truncate(in.Key.Namespace, avail, el) + "/" + in.Key.Name
}

func name(in *state.Instance) string {
	if in.Key.Namespace == "" {
		return in.Key.Name
	}
	return in.Key.Namespace + "/" + in.Key.Name
}

// counts renders "4 instances  ✓ 2 ACTIVE  ✗ 1 ERROR" over the rows shown,
// in the words the rows use.
func (p *instancesScreen) counts() string {
	th := p.c.th
	n, order := p.tally.n, p.tally.order
	parts := []string{plural(len(p.table.rows), "instance")}
	if p.table.query != "" {
		parts[0] = fmt.Sprintf("%d/%d instances", len(p.table.rows), len(p.snap.Instances))
	}
	if pos := p.table.position(); pos != "" {
		parts[0] += " " + th.Dim.Render("("+pos+")")
	}
	// The filter's terms, one chip each, first: what narrows the list
	// stays in sight however narrow the line.
	for _, t := range strings.Fields(p.table.query) {
		parts = append(parts, th.Accent.Render("["+t+"]"))
	}
	// A rollout's progress, as the store counts it, while it runs.
	for i := range p.snap.Graphs {
		if g := &p.snap.Graphs[i]; g.Status.Rollout.Running() {
			parts = append(parts, th.Accent.Render(g.Name+": "+g.Status.Rollout.Line()))
		}
	}
	// A graph the engine refused serves none of its instances: said
	// here, since its rows may be all there is of it.
	for i := range p.snap.Graphs {
		if g := &p.snap.Graphs[i]; refusal(g) != "" {
			parts = append(parts, th.ClassStyle(state.ClassFailed).Render(th.G.Error+" graph "+g.Name+" not served"))
		}
	}
	for _, ph := range order {
		parts = append(parts, th.ClassStyle(ph.Class()).Render(fmt.Sprintf("%s %d %s", th.ClassGlyph(ph.Class(), 0), n[ph], ph.Word())))
	}
	return strings.Join(parts, "  ")
}

// prepare keeps the cursor visible and draws the visible rows.
func (p *instancesScreen) prepare() {
	k := listKey{rows: p.rowsFor, cursor: p.table.cursor, w: p.w, h: p.h, frame: p.c.frame, now: p.c.now().Unix(),
		showLogs: p.showLogs, logs: len(p.snap.Logs), th: p.c.th, filtering: p.table.typing}
	if p.table.typing {
		k.filterView = p.table.input.View()
	}
	if p.lines != nil && k == p.drawn {
		return
	}
	p.drawn = k
	th, w := p.c.th, p.w
	tableH, logH := p.h-1, 0
	if p.showLogs {
		logH = max((p.h-1)/3, 3)
		tableH = p.h - 1 - logH
	}
	rows := p.tableLines(tableH)
	lines := []string{clip(p.counts(), w, th.G.Ellipsis)}
	lines = append(lines, padLines(rows, w, tableH)...)
	if logH > 0 {
		lines = append(lines, th.Header.Render(fit("LOGS", w, "")))
		lines = append(lines, block(logsView(th, p.snap.Logs, "", w, logH-1), w, logH-1, th.G.Ellipsis)...)
	}
	p.lines = lines
	p.promptLine = p.table.prompt(w)
}

// tableLines renders the header and the visible rows into h lines.
func (p *instancesScreen) tableLines(h int) []string {
	return p.table.render(h, p.w, p.emptyText())
}

// emptyText says why the list has no row: the filter, the graphs the
// engine refused (an invalid --rgd graph left the list empty without a
// word), or the kinds it waits for.
func (p *instancesScreen) emptyText() string {
	if q := p.table.query; q != "" {
		return fmt.Sprintf("No instance matches %q (esc clears the filter).", q)
	}
	var refusals, kinds []string
	for i := range p.snap.Graphs {
		g := &p.snap.Graphs[i]
		if why := refusal(g); why != "" {
			refusals = append(refusals, fmt.Sprintf("Graph %s (%s) is not served: %s", g.Name, orDash(g.Source), why))
		} else if g.Kind != "" {
			kinds = append(kinds, g.Kind)
		}
	}
	if len(refusals) > 0 {
		return strings.Join(refusals, "\n") + "\n(e shows it, D lists the graphs)"
	}
	if len(kinds) > 0 {
		return "No instances yet of " + strings.Join(kinds, ", ") + "."
	}
	return "No instances yet. Create one with kubectl apply, or run with --demo."
}

// refusal is why the engine does not serve g ("" while it does, or
// while it is still starting): its own refusal, or kro's.
func refusal(g *state.Graph) string {
	if g.Served || g.Err == "" {
		return ""
	}
	if g.Status.Reason != "" {
		return g.Status.Reason
	}
	return g.Err
}

func (p *instancesScreen) View() string { return strings.Join(p.lines, "\n") }

func (p *instancesScreen) prompt() (string, bool) { return p.promptLine, p.table.typing }

// spaced renders a reconcile's duration with its unit apart: "84 ms", "1.2 s".
func spaced(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return "<1 ms"
	case d < time.Minute: // dur's "84ms", "1.2s"
		s := dur(d)
		unit := strings.IndexFunc(s, unicode.IsLetter)
		return s[:unit] + " " + s[unit:]
	}
	return dur(d)
}

// actions is the instances screen's, in footer order.
func (p *instancesScreen) actions() []action {
	hasRow := func() bool { return p.selected() != nil }
	openOn := func(name, help, short string, t detailTab) action {
		a := share(name, help, short, do0(func() { p.open(t) }))
		a.when = hasRow
		return a
	}
	ops := targeting{c: p.c, in: p.selected, snap: func() *state.Snapshot { return p.snap }}
	filter, sorts, moves := p.table.actions("filter the rows")
	yaml := share("yaml", "the selected instance's YAML (the Instance tab; y there: its summary)", "", do0(p.openYAML))
	yaml.when = hasRow
	back := share("back", "clear the filter, close the log", "", do0(p.back))
	back.when = func() bool { return p.table.query != "" || p.showLogs }
	acts := []action{
		openOn("open", "open the instance", "open", tabInspect), filter,
		ops.requeueAction(), ops.deleteAction(),
		share("nextError", "next instance in error", "error", do0(p.nextError)),
		ops.editAction(""),
	}
	acts = append(acts, sorts[:1]...) // s: the next sort
	acts = append(acts,
		share("logs", "show or hide the engine log", "logs", do0(func() { p.showLogs = !p.showLogs })),
		action{name: "requeueAll", keys: []string{"R"}, help: "requeue all shown", denied: func() string { return mayNotRequeueAny(p.snap) },
			do: func() tea.Cmd { return requeueAll(p.c, p.table.query) }})
	acts = append(acts, sorts[1:]...)
	acts = append(acts, moves...)
	return offer(append(acts,
		yaml,
		openOn("history", "open on the history", "", tabHistory),
		openOn("timeline", "open on the timeline", "", tabTimeline),
		openOn("instance", "describe: open on the instance itself (spec, status, conditions, Events)", "", tabInstance),
		openOn("instanceLogs", "open on the instance's log lines (the engine's, about it)", "", tabLogs),
		back)...)
}

// back clears the filter, else closes the log.
func (p *instancesScreen) back() {
	if p.table.query != "" {
		p.table.filterTo("")
	} else {
		p.showLogs = false
	}
}

// opened is a new screen on the selected instance, on tab t.
func (p *instancesScreen) opened(t detailTab) *instanceScreen {
	in := p.selected()
	if in == nil {
		return nil
	}
	p.table.follow()
	s := newInstanceScreen(p.c, in.Key)
	s.detail.setTab(t)
	s.Update(snapMsg{p.snap})
	return s
}

// open drills into the selected instance on the given tab.
func (p *instancesScreen) open(t detailTab) {
	if s := p.opened(t); s != nil {
		p.c.host.push(s)
	}
}

// openYAML opens the selected instance on its own YAML: y on a row is
// about the row's object, not its first child's.
func (p *instancesScreen) openYAML() {
	if s := p.opened(tabInstance); s != nil {
		s.detail.inst.yaml = true
		p.c.host.push(s)
	}
}

// nextError opens the next instance in error at its failed resource and
// shows its error. An error that cleared meanwhile still leads to the
// resource it named, never to whatever the cursor was on.
func (p *instancesScreen) nextError() {
	now, h, t := p.c.now(), p.c.host, p.table
	land := func(i int, in *state.Instance) {
		t.cursor = i
		d := p.opened(tabInspect)
		if j := failedAt(in, d.graph.tree.order, 0); j >= 0 {
			d.graph.select1(j)
		} else if in.LastError != nil {
			d.graph.select1(d.graph.indexOf(in.LastError.Resource))
		}
		h.push(d)
	}
	for step := 1; step <= len(t.rows); step++ {
		i := (t.cursor + step) % len(t.rows)
		in := t.rows[i]
		if in.Phase().Class() != state.ClassFailed {
			continue
		}
		land(i, in)
		h.flash(errorFlash(in, now), true)
		return
	}
	if p.openRefused() {
		return
	}
	// Nothing fails now: go to the error that cleared last.
	best := -1
	for i, in := range t.rows {
		if in.LastError != nil && (best < 0 || in.LastError.At.After(t.rows[best].LastError.At)) {
			best = i
		}
	}
	if best >= 0 {
		in := t.rows[best]
		land(best, in)
		h.flash("no instance in error now; last: "+errorFlash(in, now), true)
		return
	}
	h.flash("no instance in error", false)
}

// openRefused opens the first graph the engine refused on its status,
// which says why, and reports whether there was one: a graph that is
// not served is an error too, and e found none.
func (p *instancesScreen) openRefused() bool {
	for i := range p.snap.Graphs {
		if g := &p.snap.Graphs[i]; refusal(g) != "" {
			s := newGraphScreen(p.c, g.Name)
			s.tab = rgdTabStatus
			p.c.host.push(s)
			p.c.host.flash("graph "+g.Name+" is not served: "+refusal(g), true)
			return true
		}
	}
	return false
}
