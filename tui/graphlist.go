package tui

import (
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kroscope/kroscope/engine/state"
)

// graphsScreen is the table of graphs (`:graphs`, `:rgd`, D from the list):
// each ResourceGraphDefinition's kind, group/version, scope, state,
// conditions, instances by state and why it is not served. Everything it
// shows the engine computed (state.Graph.Status); the screen only lays it
// out. enter opens one graph, i lists its instances.
type graphsScreen struct {
	screenDefaults
	c    *common
	snap *state.Snapshot
	acts []action

	table   *table[graphRow, string, struct{}]
	rowsFor graphRowsKey
	built   bool

	w, h       int
	lines      []string
	promptLine string
}

// graphRow is one graph and its cells, as plain text.
type graphRow struct {
	g                                        *state.Graph
	name, kind, gv, scope, st, conds, reason string
	class                                    state.Class // the state's colour
	inst                                     []instCount
}

// instCount is one class of instances in the INSTANCES cell.
type instCount struct {
	class state.Class
	n     int
}

type graphRowsKey struct {
	version uint64
	query   string
	sortBy  int
	desc    bool
}

// graphSort is the graphs list's order, as its table's sorts are
// numbered.
type graphSort int

const (
	graphSortName graphSort = iota
	graphSortState
	graphSortKind
	graphSortInstances
	numGraphSorts
)

func newGraphsScreen(c *common) *graphsScreen {
	s := &graphsScreen{c: c, snap: &state.Snapshot{}}
	sorts := []tableSort{
		{"name", share("sortName", "sort by name", "", nil)},
		{"state", share("sortState", "sort by state, not served first", "", nil)},
		{"kind", share("sortKind", "sort by kind", "", nil)},
		{"instances", action{name: "sortInstances", keys: []string{"I"}, help: "sort by instances, most first"}},
	}
	s.table = newTable[graphRow, string, struct{}](c, "text, state:inactive, scope:cluster", s.columns(), sorts, func(r graphRow) string { return r.g.Name }, s.rebuild)
	s.table.noun = "graphs"
	s.acts = s.actions()
	return s
}

func (s *graphsScreen) bindings() ([]action, bool) {
	if s.table.typing {
		return s.table.filterActs, false
	}
	return s.acts, true
}

// scope: the graphs screens show every graph whatever the list's view.
func (s *graphsScreen) scope() (viewScope, bool) { return viewScope{}, true }

func (s *graphsScreen) views() []string        { return []string{viewGraphs} }
func (s *graphsScreen) View() string           { return strings.Join(s.lines, "\n") }
func (s *graphsScreen) prompt() (string, bool) { return s.promptLine, s.table.typing }

func (s *graphsScreen) SetSize(w, h int) {
	s.w, s.h = w, h
	s.table.input.SetWidth(max(w-2, 1))
}

func (s *graphsScreen) Update(msg tea.Msg) tea.Cmd {
	if m, ok := msg.(snapMsg); ok {
		s.snap = m.snap
		s.rebuild()
		return nil
	}
	if cmd, took := s.table.update(msg); took {
		return cmd
	}
	s.c.explain(msg, "graphs", s.acts)
	return nil
}

// selected is the graph under the cursor, or nil.
func (s *graphsScreen) selected() *state.Graph {
	if r, ok := s.table.selected(); ok {
		return r.g
	}
	return nil
}

// rebuild filters, sorts and formats the rows when the snapshot, the
// filter or the order changed; the cursor stays on its graph.
func (s *graphsScreen) rebuild() {
	t := s.table
	key := graphRowsKey{version: s.snap.Version, query: t.query, sortBy: t.sortBy, desc: t.desc}
	if s.built && key == s.rowsFor {
		return
	}
	s.rowsFor, s.built = key, true
	q := parseGraphQuery(t.query)
	rows := make([]graphRow, 0, len(s.snap.Graphs))
	for i := range s.snap.Graphs {
		if g := &s.snap.Graphs[i]; q.match(g) {
			rows = append(rows, newGraphRow(g))
		}
	}
	slices.SortStableFunc(rows, func(a, b graphRow) int { return compareGraphs(a, b, graphSort(t.sortBy), t.desc) })
	t.setRows(rows)
}

func compareGraphs(a, b graphRow, by graphSort, desc bool) int {
	c := 0
	switch by {
	case graphSortState: // not served first
		c = strings.Compare(b.st, a.st)
	case graphSortKind:
		c = strings.Compare(a.kind, b.kind)
	case graphSortInstances: // most first
		c = b.g.Status.Total - a.g.Status.Total
	}
	if c == 0 {
		c = strings.Compare(a.name, b.name)
	}
	if desc {
		return -c
	}
	return c
}

// graphQuery is the graphs filter: free words match the name, kind,
// group/version or reason; state: and scope: one field each.
type graphQuery struct{ words, states, scopes []string }

func parseGraphQuery(s string) graphQuery {
	var q graphQuery
	for _, f := range strings.Fields(strings.ToLower(s)) {
		k, v, ok := strings.Cut(f, ":")
		switch {
		case ok && k == "state" && v != "":
			q.states = append(q.states, v)
		case ok && k == "scope" && v != "":
			q.scopes = append(q.scopes, v)
		case ok && v == "" && (k == "state" || k == "scope"):
			// still being typed: narrows nothing yet
		default:
			q.words = append(q.words, f)
		}
	}
	return q
}

func (q graphQuery) match(g *state.Graph) bool {
	if len(q.states) > 0 && !slices.Contains(q.states, strings.ToLower(g.Status.State)) {
		return false
	}
	if len(q.scopes) > 0 && !slices.Contains(q.scopes, strings.ToLower(g.Status.Scope)) {
		return false
	}
	hay := strings.ToLower(g.Name + " " + g.Kind + " " + g.APIVersion + " " + g.Resource + " " + g.Status.Reason)
	for _, w := range q.words {
		if !strings.Contains(hay, w) {
			return false
		}
	}
	return true
}

// newGraphRow formats one graph's cells.
func newGraphRow(g *state.Graph) graphRow {
	st := g.Status
	r := graphRow{g: g, name: g.Name, kind: orDash(g.Kind), gv: orDash(g.APIVersion), scope: orDash(st.Scope),
		st: orDash(st.State), class: state.ClassFailed, conds: conditionsCell(st.Conditions)}
	if st.State == state.GraphActive {
		r.class = state.ClassOK
	}
	if st.By == state.ByKro {
		r.st += " (kro)"
	}
	r.reason = strings.ReplaceAll(st.Reason, "\n", " ")
	if r.reason == "" && g.Note != "" {
		r.reason = g.Note
	}
	for _, c := range instanceClasses {
		n := 0
		for phase, k := range st.Instances {
			if state.Phase(phase).Class() == c {
				n += k
			}
		}
		if n > 0 {
			r.inst = append(r.inst, instCount{c, n})
		}
	}
	return r
}

// instanceClasses is the order of the INSTANCES cell: the worst first.
var instanceClasses = []state.Class{state.ClassFailed, state.ClassWaiting, state.ClassDeleting, state.ClassProgressing,
	state.ClassPending, state.ClassSuspended, state.ClassUnknown, state.ClassSkipped, state.ClassOK}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// conditionsCell is "Ready" when the root condition is True, else the
// conditions that are not True ("KindReady=False").
func conditionsCell(cs []state.Condition) string {
	if len(cs) == 0 {
		return "-"
	}
	var bad []string
	for _, c := range cs {
		if c.Type == "Ready" && c.Status == "True" {
			return "Ready"
		}
		if c.Type != "Ready" && c.Status != "True" {
			bad = append(bad, c.Type+"="+c.Status)
		}
	}
	if len(bad) == 0 {
		return "Ready=" + cs[len(cs)-1].Status
	}
	return strings.Join(bad, ",")
}

// instText is the INSTANCES cell: "5 ✗1 ✓4" (the glyphs are the theme's).
func (s *graphsScreen) instText(r graphRow) string {
	parts := []string{fmt.Sprint(r.g.Status.Total)}
	for _, ic := range r.inst {
		parts = append(parts, s.c.th.ClassGlyph(ic.class, 0)+fmt.Sprint(ic.n))
	}
	return strings.Join(parts, " ")
}

// columns are the graphs list's, in order. Their widths depend on
// every row, not only the visible ones, so columns stay put while
// scrolling; the reason takes the rest, and needs room to say something:
// the columns a reader needs least give way first when the terminal is
// narrow, then the name.
func (s *graphsScreen) columns() []column[graphRow] {
	natural := func(header string, most int, cell func(graphRow) string) func() int {
		return func() int {
			w := len(header)
			for _, r := range s.table.rows {
				w = max(w, ansi.StringWidth(cell(r)))
			}
			return min(w, most)
		}
	}
	text := func(f func(graphRow) string) func(graphRow, int) string {
		return func(r graphRow, _ int) string { return f(r) }
	}
	name := func(r graphRow) string { return r.name }
	kind := func(r graphRow) string { return r.kind }
	gv := func(r graphRow) string { return r.gv }
	scope := func(r graphRow) string { return r.scope }
	st := func(r graphRow) string { return s.c.th.ClassGlyph(r.class, 0) + " " + r.st }
	conds := func(r graphRow) string { return r.conds }
	const unbounded = 1 << 30
	return []column[graphRow]{
		{header: "NAME", width: natural("NAME", 32, name), floor: 8, cell: text(name), sort: 1 + int(graphSortName)},
		{header: "KIND", width: natural("KIND", 16, kind), drop: 4, cell: text(kind), sort: 1 + int(graphSortKind)},
		{header: "GROUP/VERSION", width: natural("GROUP/VERSION", 24, gv), drop: 1, cell: text(gv)},
		{header: "SCOPE", width: natural("SCOPE", unbounded, scope), drop: 3, cell: text(scope)},
		{header: "STATE", width: natural("STATE", unbounded, func(r graphRow) string { return "  " + r.st }), cell: text(st), sort: 1 + int(graphSortState),
			style: func(r graphRow, c string) string { return s.c.th.ClassStyle(r.class).Render(c) }},
		{header: "CONDITIONS", width: natural("CONDITIONS", 28, conds), drop: 2, cell: text(conds)},
		{header: "INSTANCES", width: natural("INSTANCES", 22, s.instText), cell: text(s.instText), sort: 1 + int(graphSortInstances)},
		{header: "REASON", flex: func(rest int) int { return max(rest, 0) }, cell: text(func(r graphRow) string { return r.reason }),
			least: func() int {
				least := len("REASON")
				for _, r := range s.table.rows {
					least = min(max(least, ansi.StringWidth(r.reason)), 16)
				}
				return least
			}},
	}
}

// prepare draws the counts line, the header and the visible rows.
func (s *graphsScreen) prepare() {
	th, w, t := s.c.th, s.w, s.table
	h := max(s.h-1, 1)
	msg := "No graphs yet: kroscope serves the ResourceGraphDefinitions of --rgd files or the cluster."
	if t.query != "" {
		msg = fmt.Sprintf("No graph matches %q (esc clears the filter).", t.query)
	}
	rows := t.render(h, w, msg) // first: the counts say which rows show
	s.lines = append([]string{clip(s.counts(), w, th.G.Ellipsis)}, padLines(rows, w, h)...)
	s.promptLine = t.prompt(w)
}

// counts is "4 graphs  ✓ 3 Active  ✗ 1 Inactive" over the rows shown.
func (s *graphsScreen) counts() string {
	th := s.c.th
	active := 0
	rows := s.table.rows
	for _, r := range rows {
		if r.class == state.ClassOK {
			active++
		}
	}
	head := fmt.Sprintf("%d graphs", len(rows))
	if s.table.query != "" {
		head = fmt.Sprintf("%d/%d graphs", len(rows), len(s.snap.Graphs))
	}
	parts := []string{th.Bold.Render(head)}
	if pos := s.table.position(); pos != "" {
		parts[0] += " " + th.Dim.Render("("+pos+")")
	}
	if active > 0 {
		parts = append(parts, th.ClassStyle(state.ClassOK).Render(fmt.Sprintf("%s %d Active", th.ClassGlyph(state.ClassOK, 0), active)))
	}
	if n := len(rows) - active; n > 0 {
		parts = append(parts, th.ClassStyle(state.ClassFailed).Render(fmt.Sprintf("%s %d Inactive", th.ClassGlyph(state.ClassFailed, 0), n)))
	}
	return strings.Join(parts, "  ")
}

// The graphs screens' views, for Views.
const viewGraphs = "graphs"

func graphsViews() []View {
	out := []View{{Name: viewGraphs}}
	for t := rgdTab(0); t < numRGDTabs; t++ {
		out = append(out, View{Name: t.view()})
	}
	return out
}

// isGraphs matches the graphs screen on the stack, which :graphs and D
// bring to the front (its filter and cursor kept).
func isGraphs(s screen) bool { _, ok := s.(*graphsScreen); return ok }

// actions is the graphs screen's, in footer order.
func (s *graphsScreen) actions() []action {
	hasRow := func() bool { return s.selected() != nil }
	open := share("open", "open the graph: layers, schema, status, YAML, Events", "open",
		do0(func() { s.c.host.push(newGraphScreen(s.c, s.selected().Name)) }))
	open.when = hasRow
	inst := share("graphInstances", "list the graph's instances", "instances", func() tea.Cmd { return listGraph(s.c, s.selected().Name) })
	inst.when = hasRow
	filter, sorts, moves := s.table.actions("filter the graphs (text, state:inactive, scope:cluster)")
	acts := append([]action{open, inst, filter}, sorts...)
	acts = append(acts, moves...)
	return offer(append(acts, share("back", "clear the filter, else back to the instances", "back", do0(s.back)))...)
}

func (s *graphsScreen) back() {
	if s.table.query != "" {
		s.table.filterTo("")
		return
	}
	s.c.host.pop()
}
