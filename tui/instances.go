package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/theme"
)

type sortKey int

const (
	sortName sortKey = iota
	sortState
	sortKind
	sortAge
	sortLast
	numSorts
)

func (s sortKey) String() string {
	return [...]string{"name", "state", "kind", "age", "last reconcile"}[s]
}

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
	q := parseQuery(p.query)
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

// instancesScreen is the instances table, its filter and the log pane. It
// is always at the bottom of the screen stack.
type instancesScreen struct {
	screenDefaults
	c    *common
	snap *state.Snapshot

	acts, filterActs []action

	rows    []*state.Instance
	rowsFor rowsKey
	order   sortedRows // every instance in the table's order
	tally   phaseTally // the rows' phases, for the counts line
	cursor  int
	offset  int
	selKey  state.InstanceKey
	// moved: the user chose a row, so the cursor follows that instance.
	// Until then the list stays at its top whatever arrives first.
	moved bool

	sortBy    sortKey
	desc      bool
	query     string
	filter    textinput.Model
	filtering bool
	showLogs  bool

	rowCache map[state.InstanceKey]rowEntry

	w, h       int
	drawn      listKey
	lines      []string
	promptLine string
}

// rowsKey is what the filtered, sorted rows were built from.
type rowsKey struct {
	version uint64
	query   string
	sortBy  sortKey
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
	f := textinput.New()
	f.Prompt = "/"
	f.Placeholder = "text, state:error, kind:WebApp, ns:team-a, graph:webapp"
	p := &instancesScreen{c: c, filter: f, rowCache: map[state.InstanceKey]rowEntry{}, snap: &state.Snapshot{}}
	p.acts, p.filterActs = p.actions(), p.filterActions()
	return p
}

func (p *instancesScreen) bindings() ([]action, bool) {
	if p.filtering {
		return p.filterActs, false
	}
	return p.acts, true
}

func (p *instancesScreen) scope() (viewScope, bool) { return p.scope1(), true }

func (p *instancesScreen) SetSize(w, h int) {
	p.w, p.h = w, h
	// The placeholder shows whole only with a width (bubbles draws just its
	// first letter otherwise).
	p.filter.SetWidth(max(w-2, 1))
}

func (p *instancesScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case snapMsg:
		p.snap = msg.snap
		p.rebuildRows()
	case tea.MouseClickMsg:
		// Line 0 is the counts, line 1 the table header.
		if msg.Button == tea.MouseLeft {
			if i := p.offset + msg.Y - 2; msg.Y >= 2 && i < len(p.rows) {
				p.cursor = i
				p.follow()
			}
		}
	case tea.MouseWheelMsg:
		if msg.Button == tea.MouseWheelUp {
			p.move(-3)
		} else if msg.Button == tea.MouseWheelDown {
			p.move(3)
		}
	case tea.KeyPressMsg:
		if !p.filtering { // never silently nothing
			p.c.host.flash(p.c.keys.whyNot(msg.String(), "instances", p.acts), false)
			return nil
		}
		var cmd tea.Cmd
		p.filter, cmd = p.filter.Update(msg)
		p.setQuery(p.filter.Value())
		return cmd
	case switchMsg:
		p.switchView(msg.key, msg.value)
	case graphListMsg:
		q := "graph:" + strings.ToLower(msg.name)
		p.filter.SetValue(q)
		p.setQuery(q)
		p.c.host.flash("graph "+msg.name+": "+plural(len(p.rows), "instance"), false)
	default:
		if p.filtering {
			var cmd tea.Cmd
			p.filter, cmd = p.filter.Update(msg)
			return cmd
		}
	}
	return nil
}

func (p *instancesScreen) selected() *state.Instance {
	if p.cursor >= 0 && p.cursor < len(p.rows) {
		return p.rows[p.cursor]
	}
	return nil
}

// follow pins the cursor to the instance under it.
func (p *instancesScreen) follow() {
	if in := p.selected(); in != nil {
		p.selKey, p.moved = in.Key, true
	}
}

func (p *instancesScreen) move(d int) {
	p.cursor = clamp(p.cursor+d, 0, len(p.rows)-1)
	p.follow()
}

func (p *instancesScreen) pageSize() int { return max(p.h-3, 1) }

// toFirst puts the cursor on the first row: filtering and sorting do.
func (p *instancesScreen) toFirst() {
	p.cursor, p.offset = 0, 0
	p.follow()
}

func (p *instancesScreen) setQuery(s string) {
	if s == p.query {
		return
	}
	p.query = s
	p.rebuildRows()
	p.toFirst()
}

// setSort sorts by k; the same key again reverses the order.
func (p *instancesScreen) setSort(k sortKey) {
	if p.sortBy == k {
		p.desc = !p.desc
	} else {
		p.sortBy, p.desc = k, false
	}
	p.rebuildRows()
	p.toFirst()
}

// rebuildRows filters and sorts the instances when the snapshot, the filter
// or the order changed.
func (p *instancesScreen) rebuildRows() {
	key := rowsKey{version: p.snap.Version, query: p.query, sortBy: p.sortBy, desc: p.desc}
	if p.rows != nil && key == p.rowsFor {
		return
	}
	p.order.update(p.snap, p.sortBy, p.desc)
	q := parseQuery(p.query)
	rows := make([]*state.Instance, 0, len(p.order.all))
	for _, it := range p.order.all {
		if q.match(it.in) {
			rows = append(rows, it.in)
		}
	}
	p.rows, p.rowsFor = rows, key
	p.tally = tally(rows)
	p.cursor = clamp(p.cursor, 0, len(rows)-1)
	if p.moved {
		for i, in := range rows {
			if in.Key == p.selKey {
				p.cursor = i
				break
			}
		}
	}
	if len(p.rowCache) > 2*len(p.snap.Instances)+64 {
		p.rowCache = map[state.InstanceKey]rowEntry{} // forget instances that are gone
	}
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

// columns are the table's column widths; the message takes what is left.
// The state column is as wide as the longest state shown.
type columns struct {
	state, name, kind, ready, age, last, took, msg int
	short                                          bool // short state words: the terminal is narrow
}

func tableColumns(w, stateW int, by sortKey) columns {
	c := columns{state: stateW, kind: 10, ready: 5, age: 4}
	if w < 60 {
		c.short = true
		c.state = min(stateW, 14)
	}
	gaps := 5
	switch {
	case w >= 100:
		c.last, c.took, c.kind = 11, 7, 12 // RECONCILED and its arrow
		gaps = 7
	case w >= 70 || by == sortLast:
		// The last reconcile, short, so O's column and arrow are there.
		c.last = 5
		gaps = 6
	}
	rest := w - c.state - c.kind - c.ready - c.age - c.last - c.took - gaps
	c.name = clamp(rest*2/5, 12, 32)
	c.msg = max(rest-c.name, 0)
	return c
}

// rowEntry caches one rendered row: it depends on the instance Version,
// the columns, the theme, the spinner frame (in progress) and the clock
// columns.
type rowEntry struct {
	version uint64
	cols    columns
	th      *theme.Theme
	frame   int
	clock   string
	line    string
}

func (p *instancesScreen) row(in *state.Instance, c columns, selected bool) string {
	now := p.c.now()
	age := ageOf(now, in.Created)
	last, took := "-", ""
	if !in.LastReconcile.IsZero() {
		last, took = ageOf(now, in.LastReconcile)+" ago", spaced(in.LastDuration)
	}
	frame := 0
	if in.Phase().Class() == state.ClassProgressing {
		frame = p.c.frame
	}
	clock := age + "|" + last + "|" + took
	if !selected {
		if e, ok := p.rowCache[in.Key]; ok && e.version == in.Version && e.cols == c && e.th == p.c.th && e.frame == frame && e.clock == clock {
			return e.line
		}
	}
	th := p.c.th
	el := th.G.Ellipsis
	word := in.Phase().Word()
	if c.short {
		word = in.Phase().Short()
	}
	ready, total := in.ReadyCount()
	msg := in.Message
	if msg == "" && in.Deleting {
		msg = "being deleted"
	}
	msg = strings.ReplaceAll(msg, "\n", " ")
	stateCell := fit(th.Glyph(in.State, frame)+" "+word, c.state, el)
	cells := []string{
		"", // state, styled below
		fit(shortName(in, c.name, el), c.name, el),
		fit(in.Kind, c.kind, el),
		fit(fmt.Sprintf("%d/%d", ready, total), c.ready, el),
		fit(age, c.age, el),
	}
	switch {
	case c.took > 0:
		cells = append(cells, fit(last, c.last, el), fit(took, c.took, el))
	case c.last > 0:
		cells = append(cells, fit(strings.TrimSuffix(last, " ago"), c.last, el))
	}
	cells = append(cells, fit(msg, c.msg, el))
	if selected {
		cells[0] = stateCell
		return th.Selected.Render(fit(strings.Join(cells, " "), p.w, el))
	}
	cells[0] = th.Style(in.State).Render(stateCell)
	if ready < total && ready > 0 {
		cells[3] = th.Dim.Render(cells[3])
	}
	if in.Phase().Class() == state.ClassFailed {
		cells[len(cells)-1] = th.ClassStyle(state.ClassFailed).UnsetBold().Render(cells[len(cells)-1])
	}
	line := strings.Join(cells, " ")
	p.rowCache[in.Key] = rowEntry{version: in.Version, cols: c, th: th, frame: frame, clock: clock, line: line}
	return line
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

// tableHeader names the columns; the sorted one carries an arrow.
func (p *instancesScreen) tableHeader(c columns) string {
	g := p.c.th.G
	arrow := func(k sortKey, label string) string {
		if p.sortBy != k {
			return label
		}
		if p.desc {
			return label + g.SortDown
		}
		return label + g.SortUp
	}
	nameLabel := "NAMESPACE/NAME"
	if c.name < len(nameLabel)+1 { // room for the arrow
		nameLabel = "NAME"
	}
	cells := []string{fit(arrow(sortState, "STATE"), c.state, ""), fit(arrow(sortName, nameLabel), c.name, ""),
		fit(arrow(sortKind, "KIND"), c.kind, ""), fit("READY", c.ready, ""), fit(arrow(sortAge, "AGE"), c.age, "")}
	switch {
	case c.took > 0:
		cells = append(cells, fit(arrow(sortLast, "RECONCILED"), c.last, ""), fit("TOOK", c.took, ""))
	case c.last > 0:
		cells = append(cells, fit(arrow(sortLast, "LAST"), c.last, ""))
	}
	cells = append(cells, fit("MESSAGE", c.msg, ""))
	return strings.Join(cells, " ")
}

// counts renders "4 instances  ✓ 2 ACTIVE  ✗ 1 ERROR" over the rows shown,
// in the words the rows use.
func (p *instancesScreen) counts() string {
	th := p.c.th
	n, order := p.tally.n, p.tally.order
	parts := []string{plural(len(p.rows), "instance")}
	if p.query != "" {
		parts[0] = fmt.Sprintf("%d/%d instances", len(p.rows), len(p.snap.Instances))
	}
	// The filter's terms, one chip each, first: what narrows the list
	// stays in sight however narrow the line.
	for _, t := range strings.Fields(p.query) {
		parts = append(parts, th.Accent.Render("["+t+"]"))
	}
	// A rollout's progress, as the store counts it, while it runs.
	for i := range p.snap.Graphs {
		if g := &p.snap.Graphs[i]; g.Status.Rollout.Running() {
			parts = append(parts, th.Accent.Render(g.Name+": "+g.Status.Rollout.Line()))
		}
	}
	for _, ph := range order {
		parts = append(parts, th.ClassStyle(ph.Class()).Render(fmt.Sprintf("%s %d %s", th.ClassGlyph(ph.Class(), 0), n[ph], ph.Word())))
	}
	return strings.Join(parts, "  ")
}

// prepare keeps the cursor visible and draws the visible rows.
func (p *instancesScreen) prepare() {
	k := listKey{rows: p.rowsFor, cursor: p.cursor, w: p.w, h: p.h, frame: p.c.frame, now: p.c.now().Unix(),
		showLogs: p.showLogs, logs: len(p.snap.Logs), th: p.c.th, filtering: p.filtering}
	if p.filtering {
		k.filterView = p.filter.View()
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
	lines := []string{clip(p.counts(), w, th.G.Ellipsis)}
	lines = append(lines, padLines(p.table(tableH), w, tableH)...)
	if logH > 0 {
		lines = append(lines, th.Header.Render(fit("LOGS", w, "")))
		lines = append(lines, block(logsView(th, p.snap.Logs, "", w, logH-1), w, logH-1, th.G.Ellipsis)...)
	}
	p.lines = lines
	switch {
	case p.filtering:
		p.promptLine = fit(k.filterView, w, "")
	case p.query != "":
		p.promptLine = fit(th.Dim.Render("filter: "+p.query), w, th.G.Ellipsis)
	default:
		p.promptLine = ""
	}
}

// table renders the header and the visible rows into h lines.
func (p *instancesScreen) table(h int) []string {
	th := p.c.th
	rows := h - 1
	if len(p.rows) == 0 {
		out := []string{th.Header.Render(fit(p.tableHeader(tableColumns(p.w, 2+len(state.PhaseInProgress.Word()), p.sortBy)), p.w, ""))}
		msg := "No instances yet. Create one with kubectl apply, or run with --demo."
		if p.query != "" {
			msg = fmt.Sprintf("No instance matches %q (esc clears the filter).", p.query)
		}
		if len(p.snap.Graphs) > 0 && p.query == "" {
			kinds := make([]string, 0, len(p.snap.Graphs))
			for _, g := range p.snap.Graphs {
				kinds = append(kinds, g.Kind)
			}
			msg = "No instances yet of " + strings.Join(kinds, ", ") + "."
		}
		return append(out, th.Dim.Render(fit("  "+msg, p.w, th.G.Ellipsis)))
	}
	if p.cursor < p.offset {
		p.offset = p.cursor
	}
	if p.cursor >= p.offset+rows {
		p.offset = p.cursor - rows + 1
	}
	p.offset = clamp(p.offset, 0, max(len(p.rows)-rows, 0))
	end := min(p.offset+rows, len(p.rows))
	// As wide as IN_PROGRESS at least, so the columns stay put as rows
	// scroll, filter and change state.
	stateW := 2 + len(state.PhaseInProgress.Word())
	for _, in := range p.rows[p.offset:end] {
		stateW = max(stateW, 2+len(in.Phase().Word()))
	}
	c := tableColumns(p.w, stateW, p.sortBy)
	out := make([]string, 0, h)
	out = append(out, th.Header.Render(fit(p.tableHeader(c), p.w, "")))
	for i := p.offset; i < end; i++ {
		out = append(out, p.row(p.rows[i], c, i == p.cursor))
	}
	return out
}

func (p *instancesScreen) View() string { return strings.Join(p.lines, "\n") }

func (p *instancesScreen) prompt() (string, bool) { return p.promptLine, p.filtering }

// spaced renders a reconcile's duration with its unit apart: "84 ms", "1.2 s".
func spaced(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return "<1 ms"
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// actions is the instances screen's, in footer order.
func (p *instancesScreen) actions() []action {
	hasRow := func() bool { return p.selected() != nil }
	sortBy := func(k sortKey) func() tea.Cmd { return do0(func() { p.sortFlash(k) }) }
	openOn := func(name, help, short string, t detailTab) action {
		a := share(name, help, short, do0(func() { p.open(t) }))
		a.when = hasRow
		return a
	}
	move := func(n func() int) func() tea.Cmd { return do0(func() { p.move(n()) }) }
	by := func(n int) func() int { return func() int { return n } }
	ops := targeting{c: p.c, in: p.selected, snap: func() *state.Snapshot { return p.snap }}
	back := share("back", "clear the filter, close the log", "", do0(p.back))
	back.when = func() bool { return p.query != "" || p.showLogs }
	return offer(
		openOn("open", "open the instance", "open", tabInspect),
		share("filter", "filter the rows", "filter", p.startFilter),
		ops.requeueAction(),
		ops.deleteAction(),
		share("nextError", "next instance in error", "error", do0(p.nextError)),
		ops.editAction(""),
		share("sort", "sort by the next column", "sort", func() tea.Cmd { return sortBy((p.sortBy + 1) % numSorts)() }),
		share("logs", "show or hide the engine log", "logs", do0(func() { p.showLogs = !p.showLogs })),
		action{name: "requeueAll", keys: []string{"R"}, help: "requeue all shown", denied: func() string { return mayNotRequeueAny(p.snap) },
			do: func() tea.Cmd { return requeueAll(p.c, p.query) }},
		share("sortName", "sort by name", "", sortBy(sortName)),
		share("sortState", "sort by state, worst first", "", sortBy(sortState)),
		share("sortKind", "sort by kind", "", sortBy(sortKind)),
		action{name: "sortAge", keys: []string{"A"}, help: "sort by age", do: sortBy(sortAge)},
		action{name: "sortReconciled", keys: []string{"O"}, help: "sort by last reconcile", do: sortBy(sortLast)},
		share("up", "up", "", move(by(-1))),
		share("down", "down", "", move(by(1))),
		share("pageUp", "page up", "", move(func() int { return -p.pageSize() })),
		share("pageDown", "page down", "", move(p.pageSize)),
		share("top", "top", "", move(by(-1<<30))),
		share("bottom", "bottom", "", move(by(1<<30))),
		openOn("yaml", "open on the YAML", "", tabYAML),
		openOn("history", "open on the history", "", tabHistory),
		openOn("timeline", "open on the timeline", "", tabTimeline),
		openOn("instance", "describe: open on the instance itself (spec, status, conditions, Events)", "", tabInstance),
		openOn("instanceLogs", "open on the instance's log lines (the engine's, about it)", "", tabLogs),
		back,
	)
}

// sortFlash sorts by k and says how.
func (p *instancesScreen) sortFlash(k sortKey) {
	p.setSort(k)
	dir := "ascending"
	if p.desc {
		dir = "descending"
	}
	p.c.host.flash("sorted by "+k.String()+", "+dir, false)
}

func (p *instancesScreen) startFilter() tea.Cmd {
	p.filtering = true
	p.filter.SetValue(p.query)
	p.filter.CursorEnd()
	return p.filter.Focus()
}

// back clears the filter, else closes the log.
func (p *instancesScreen) back() {
	if p.query != "" {
		p.filter.SetValue("")
		p.setQuery("")
	} else {
		p.showLogs = false
	}
}

// filterActions run while a filter is typed; other keys edit it.
func (p *instancesScreen) filterActions() []action {
	done := func(clear bool) func() tea.Cmd {
		return do0(func() {
			p.filtering = false
			p.filter.Blur()
			if clear {
				p.filter.SetValue("")
				p.setQuery("")
			}
		})
	}
	return offer(
		share("confirm", "keep the filter", "keep", done(false)),
		share("back", "clear the filter", "clear", done(true)),
	)
}

// opened is a new screen on the selected instance, on tab t.
func (p *instancesScreen) opened(t detailTab) *instanceScreen {
	in := p.selected()
	if in == nil {
		return nil
	}
	p.follow()
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

// nextError opens the next instance in error at its failed resource and
// shows its error. An error that cleared meanwhile still leads to the
// resource it named, never to whatever the cursor was on.
func (p *instancesScreen) nextError() {
	now, h := p.c.now(), p.c.host
	land := func(i int, in *state.Instance) {
		p.cursor = i
		d := p.opened(tabInspect)
		if j := failedAt(in, d.graph.tree.order, 0); j >= 0 {
			d.graph.select1(j)
		} else if in.LastError != nil {
			d.graph.select1(d.graph.indexOf(in.LastError.Resource))
		}
		h.push(d)
	}
	for step := 1; step <= len(p.rows); step++ {
		i := (p.cursor + step) % len(p.rows)
		in := p.rows[i]
		if in.Phase().Class() != state.ClassFailed {
			continue
		}
		land(i, in)
		h.flash(errorFlash(in, now), true)
		return
	}
	// Nothing fails now: go to the error that cleared last.
	best := -1
	for i, in := range p.rows {
		if in.LastError != nil && (best < 0 || in.LastError.At.After(p.rows[best].LastError.At)) {
			best = i
		}
	}
	if best >= 0 {
		in := p.rows[best]
		land(best, in)
		h.flash("no instance in error now; last: "+errorFlash(in, now), true)
		return
	}
	h.flash("no instance in error", false)
}
