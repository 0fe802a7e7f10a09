package tui

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/textinput"
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

	acts, filterActs []action

	rows      []graphRow
	rowsFor   graphRowsKey
	pos       graphsPos
	order     graphOrder
	filter    textinput.Model
	filtering bool

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

// graphsPos is where the cursor is: its row, the first row shown, and
// the graph under it (kept across updates).
type graphsPos struct {
	cursor, offset int
	name           string
}

// graphOrder is the filter and the sort the rows follow.
type graphOrder struct {
	query  string
	sortBy graphSort
	desc   bool
}

type graphRowsKey struct {
	version uint64
	order   graphOrder
}

type graphSort int

const (
	graphSortName graphSort = iota
	graphSortState
	graphSortKind
	graphSortInstances
	numGraphSorts
)

func (s graphSort) String() string {
	return [...]string{"name", "state", "kind", "instances"}[s]
}

func newGraphsScreen(c *common) *graphsScreen {
	f := textinput.New()
	f.Prompt = "/"
	f.Placeholder = "text, state:inactive, scope:cluster"
	s := &graphsScreen{c: c, filter: f, snap: &state.Snapshot{}}
	s.acts, s.filterActs = s.actions(), s.filterActions()
	return s
}

func (s *graphsScreen) bindings() ([]action, bool) {
	if s.filtering {
		return s.filterActs, false
	}
	return s.acts, true
}

// scope: the graphs screens show every graph whatever the list's view.
func (s *graphsScreen) scope() (viewScope, bool) { return viewScope{}, true }
func (s *graphsScreen) views() []string          { return []string{viewGraphs} }
func (s *graphsScreen) View() string             { return strings.Join(s.lines, "\n") }
func (s *graphsScreen) prompt() (string, bool)   { return s.promptLine, s.filtering }

func (s *graphsScreen) SetSize(w, h int) {
	s.w, s.h = w, h
	s.filter.SetWidth(max(w-2, 1))
}

func (s *graphsScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case snapMsg:
		s.snap = msg.snap
		s.rebuild()
	case tea.MouseClickMsg:
		if i := s.pos.offset + msg.Y - 2; msg.Button == tea.MouseLeft && msg.Y >= 2 && i < len(s.rows) {
			s.pos.cursor = i
			s.follow()
		}
	case tea.MouseWheelMsg:
		if msg.Button == tea.MouseWheelUp {
			s.move(-3)
		} else if msg.Button == tea.MouseWheelDown {
			s.move(3)
		}
	case tea.KeyPressMsg:
		if !s.filtering { // never silently nothing
			s.c.host.flash(s.c.keys.whyNot(msg.String(), "graphs", s.acts), false)
			return nil
		}
		var cmd tea.Cmd
		s.filter, cmd = s.filter.Update(msg)
		s.setQuery(s.filter.Value())
		return cmd
	default:
		if s.filtering {
			var cmd tea.Cmd
			s.filter, cmd = s.filter.Update(msg)
			s.setQuery(s.filter.Value())
			return cmd
		}
	}
	return nil
}

// selected is the graph under the cursor, or nil.
func (s *graphsScreen) selected() *state.Graph {
	if s.pos.cursor >= 0 && s.pos.cursor < len(s.rows) {
		return s.rows[s.pos.cursor].g
	}
	return nil
}

func (s *graphsScreen) follow() {
	if g := s.selected(); g != nil {
		s.pos.name = g.Name
	}
}

func (s *graphsScreen) move(d int) {
	s.pos.cursor = clamp(s.pos.cursor+d, 0, len(s.rows)-1)
	s.follow()
}

func (s *graphsScreen) setQuery(q string) {
	if q == s.order.query {
		return
	}
	s.order.query = q
	s.rebuild()
	s.pos.cursor, s.pos.offset = 0, 0
	s.follow()
}

// setSort sorts by k; the same key again reverses the order.
func (s *graphsScreen) setSort(k graphSort) {
	if s.order.sortBy == k {
		s.order.desc = !s.order.desc
	} else {
		s.order.sortBy, s.order.desc = k, false
	}
	s.rebuild()
	s.pos.cursor, s.pos.offset = 0, 0
	s.follow()
}

// rebuild filters, sorts and formats the rows when the snapshot, the
// filter or the order changed; the cursor stays on its graph.
func (s *graphsScreen) rebuild() {
	key := graphRowsKey{version: s.snap.Version, order: s.order}
	if s.rows != nil && key == s.rowsFor {
		return
	}
	s.rowsFor = key
	q := parseGraphQuery(s.order.query)
	rows := make([]graphRow, 0, len(s.snap.Graphs))
	for i := range s.snap.Graphs {
		if g := &s.snap.Graphs[i]; q.match(g) {
			rows = append(rows, newGraphRow(g))
		}
	}
	slices.SortStableFunc(rows, func(a, b graphRow) int { return compareGraphs(a, b, s.order.sortBy, s.order.desc) })
	s.rows = rows
	s.pos.cursor = clamp(s.pos.cursor, 0, len(rows)-1)
	for i, r := range rows {
		if r.g.Name == s.pos.name {
			s.pos.cursor = i
		}
	}
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

// graphCols are the widths of the table's columns (0: not shown); the
// reason takes the rest. They depend on every row, not only the visible
// ones, so columns stay put while scrolling.
type graphCols struct{ name, kind, gv, scope, st, conds, inst, reason int }

func (s *graphsScreen) columns() graphCols {
	c := graphCols{name: len("NAME"), kind: len("KIND"), gv: len("GROUP/VERSION"), scope: len("SCOPE"),
		st: len("STATE"), conds: len("CONDITIONS"), inst: len("INSTANCES")}
	for _, r := range s.rows {
		c.name, c.kind, c.gv = max(c.name, ansi.StringWidth(r.name)), max(c.kind, ansi.StringWidth(r.kind)), max(c.gv, ansi.StringWidth(r.gv))
		c.scope, c.st = max(c.scope, len(r.scope)), max(c.st, 2+len(r.st))
		c.conds, c.inst = max(c.conds, len(r.conds)), max(c.inst, ansi.StringWidth(s.instText(r)))
	}
	c.name, c.kind, c.gv, c.conds, c.inst = min(c.name, 32), min(c.kind, 16), min(c.gv, 24), min(c.conds, 28), min(c.inst, 22)
	// The reason needs room to say something; the columns a reader needs
	// least give way first when the terminal is narrow.
	minReason := len("REASON")
	for _, r := range s.rows {
		minReason = min(max(minReason, ansi.StringWidth(r.reason)), 16)
	}
	used := func() int { return c.name + c.kind + c.gv + c.scope + c.st + c.conds + c.inst + 7 }
	for _, drop := range []*int{&c.gv, &c.conds, &c.scope, &c.kind} {
		if s.w-used() >= minReason {
			break
		}
		*drop = -1 // -1 also drops its gap
	}
	if over := used() + minReason - s.w; over > 0 { // still too wide: the name gives
		c.name = max(c.name-over, 8)
	}
	c.reason = max(s.w-used(), 0)
	return c
}

// prepare draws the counts line, the header and the visible rows.
func (s *graphsScreen) prepare() {
	th, w := s.c.th, s.w
	lines := []string{clip(s.counts(), w, th.G.Ellipsis)}
	lines = append(lines, padLines(s.table(max(s.h-1, 1)), w, max(s.h-1, 1))...)
	s.lines = lines
	switch {
	case s.filtering:
		s.promptLine = fit(s.filter.View(), w, "")
	case s.order.query != "":
		s.promptLine = fit(th.Dim.Render("filter: "+s.order.query), w, th.G.Ellipsis)
	default:
		s.promptLine = ""
	}
}

// counts is "4 graphs  ✓ 3 Active  ✗ 1 Inactive" over the rows shown.
func (s *graphsScreen) counts() string {
	th := s.c.th
	active := 0
	for _, r := range s.rows {
		if r.class == state.ClassOK {
			active++
		}
	}
	head := fmt.Sprintf("%d graphs", len(s.rows))
	if s.order.query != "" {
		head = fmt.Sprintf("%d/%d graphs", len(s.rows), len(s.snap.Graphs))
	}
	parts := []string{th.Bold.Render(head)}
	if active > 0 {
		parts = append(parts, th.ClassStyle(state.ClassOK).Render(fmt.Sprintf("%s %d Active", th.ClassGlyph(state.ClassOK, 0), active)))
	}
	if n := len(s.rows) - active; n > 0 {
		parts = append(parts, th.ClassStyle(state.ClassFailed).Render(fmt.Sprintf("%s %d Inactive", th.ClassGlyph(state.ClassFailed, 0), n)))
	}
	return strings.Join(parts, "  ")
}

// cells joins the shown columns of one line.
func (c graphCols) cells(el string, name, kind, gv, scope, st, conds, inst, reason string) string {
	var out []string
	for _, x := range []struct {
		w int
		s string
	}{{c.name, name}, {c.kind, kind}, {c.gv, gv}, {c.scope, scope}, {c.st, st}, {c.conds, conds}, {c.inst, inst}, {c.reason, reason}} {
		if x.w > 0 {
			out = append(out, fit(x.s, x.w, el))
		}
	}
	return strings.Join(out, " ")
}

// table is the header and the rows that fit in h lines.
func (s *graphsScreen) table(h int) []string {
	th := s.c.th
	el := th.G.Ellipsis
	c := s.columns()
	arrow := func(k graphSort, label string) string {
		switch {
		case s.order.sortBy != k:
			return label
		case s.order.desc:
			return label + th.G.SortDown
		}
		return label + th.G.SortUp
	}
	out := []string{th.Header.Render(fit(c.cells("", arrow(graphSortName, "NAME"), arrow(graphSortKind, "KIND"), "GROUP/VERSION", "SCOPE",
		arrow(graphSortState, "STATE"), "CONDITIONS", arrow(graphSortInstances, "INSTANCES"), "REASON"), s.w, ""))}
	if len(s.rows) == 0 {
		msg := "No graphs yet: kroscope serves the ResourceGraphDefinitions of --rgd files or the cluster."
		if s.order.query != "" {
			msg = fmt.Sprintf("No graph matches %q (esc clears the filter).", s.order.query)
		}
		return append(out, th.Dim.Render(fit("  "+msg, s.w, el)))
	}
	rows := max(h-1, 1)
	s.pos.offset = clamp(s.pos.offset, max(s.pos.cursor-rows+1, 0), s.pos.cursor)
	for i := s.pos.offset; i < min(s.pos.offset+rows, len(s.rows)); i++ {
		r := s.rows[i]
		stCell := th.ClassGlyph(r.class, 0) + " " + r.st
		if i == s.pos.cursor {
			out = append(out, th.Selected.Render(fit(c.cells(el, r.name, r.kind, r.gv, r.scope, stCell, r.conds, s.instText(r), r.reason), s.w, el)))
			continue
		}
		st := th.ClassStyle(r.class).Render(fit(stCell, c.st, el))
		out = append(out, fit(c.cells(el, r.name, r.kind, r.gv, r.scope, st, r.conds, s.instText(r), r.reason), s.w, el))
	}
	return out
}
