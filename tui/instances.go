package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

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
	words, states, kinds, nss []string
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
		cl := theme.ClassOf(in.State).Word()
		if !slices.ContainsFunc(q.states, func(s string) bool { return s == st || s == cl }) {
			return false
		}
	}
	if len(q.kinds) > 0 {
		k := strings.ToLower(in.Kind)
		if !slices.ContainsFunc(q.kinds, func(s string) bool { return s == k || strings.HasPrefix(in.Key.Resource, s) }) {
			return false
		}
	}
	if len(q.nss) > 0 && !slices.Contains(q.nss, strings.ToLower(in.Key.Namespace)) {
		return false
	}
	for _, w := range q.words {
		hay := strings.ToLower(in.Key.Namespace + "/" + in.Key.Name + " " + in.Kind + " " + in.Message)
		if !strings.Contains(hay, w) {
			return false
		}
	}
	return true
}

func (m *Model) setQuery(s string) {
	m.query = s
	m.rebuildRows()
}

// rebuildRows filters and sorts the instances when the snapshot, the filter
// or the sort order changed, keeping the cursor on the same instance.
func (m *Model) rebuildRows() {
	if m.snap == nil {
		return
	}
	if m.rows != nil && m.rowsFor == m.snap.Version && m.rowsQuery == m.query && m.rowsSort == m.sortBy {
		return
	}
	q := parseQuery(m.query)
	rows := make([]*state.Instance, 0, len(m.snap.Instances))
	for _, in := range m.snap.Instances {
		if q.match(in) {
			rows = append(rows, in)
		}
	}
	if m.sortBy != sortName {
		by := m.sortBy
		slices.SortStableFunc(rows, func(a, b *state.Instance) int {
			switch by {
			case sortState:
				// Worst first: errors, then waiting, then progress...
				return rank(a.State) - rank(b.State)
			case sortKind:
				return strings.Compare(a.Kind, b.Kind)
			case sortAge:
				return a.Created.Compare(b.Created)
			case sortLast:
				return b.LastReconcile.Compare(a.LastReconcile)
			}
			return 0
		})
	}
	m.rows, m.rowsFor, m.rowsQuery, m.rowsSort = rows, m.snap.Version, m.query, m.sortBy
	m.cursor = clamp(m.cursor, 0, len(rows)-1)
	for i, in := range rows {
		if in.Key == m.selKey {
			m.cursor = i
			break
		}
	}
	if m.cursor < len(rows) {
		m.selKey = rows[m.cursor].Key
	}
	// Forget cached rows of instances that are gone.
	if len(m.rowCache) > 2*len(m.snap.Instances)+64 {
		m.rowCache = map[state.InstanceKey]*rowEntry{}
	}
}

func rank(st string) int {
	switch theme.ClassOf(st) {
	case theme.ClassError:
		return 0
	case theme.ClassWaiting:
		return 1
	case theme.ClassDeleting:
		return 2
	case theme.ClassProgress:
		return 3
	case theme.ClassPending:
		return 4
	case theme.ClassUnknown:
		return 5
	}
	return 6
}

// columns are the instance table's column widths for a terminal width; the
// message takes what is left. The last-reconcile column needs 100 cells.
type columns struct{ state, name, kind, ready, age, last, msg int }

func tableColumns(w int) columns {
	c := columns{state: 13, kind: 10, ready: 5, age: 4}
	if w >= 100 {
		c.last = 12
		c.kind = 12
	}
	fixed := c.state + c.kind + c.ready + c.age + c.last
	gaps := 6
	if c.last == 0 {
		gaps = 5
	}
	rest := w - fixed - gaps
	c.name = clamp(rest*2/5, 12, 32)
	c.msg = max(rest-c.name, 0)
	return c
}

// rowEntry caches one rendered table row. Rows depend on the instance
// Version, the width, the spinner frame (when in progress) and the two
// clock columns; anything else reuses the string.
type rowEntry struct {
	version   uint64
	width     int
	frame     int
	age, last string
	line      string
}

func (m *Model) row(in *state.Instance, c columns, selected bool) string {
	now := m.now()
	age := ageOf(now, in.Created)
	last := "-"
	if !in.LastReconcile.IsZero() {
		last = ago(now, in.LastReconcile) + " " + dur(in.LastDuration)
	}
	frame := 0
	if theme.ClassOf(in.State) == theme.ClassProgress {
		frame = m.frame
	}
	if !selected {
		if e := m.rowCache[in.Key]; e != nil && e.version == in.Version && e.width == m.w && e.frame == frame && e.age == age && e.last == last {
			return e.line
		}
	}
	th := m.th
	el := th.G.Ellipsis
	word := in.State
	if word == "" {
		word = "NEW"
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
	if c.last > 0 {
		cells = append(cells, fit(last, c.last, el))
	}
	cells = append(cells, fit(msg, c.msg, el))
	var line string
	if selected {
		cells[0] = stateCell
		line = th.Selected.Render(fit(strings.Join(cells, " "), m.w, el))
		return line
	}
	cells[0] = th.Style(in.State).Render(stateCell)
	if ready < total && ready > 0 {
		cells[3] = th.Dim.Render(cells[3])
	}
	if theme.ClassOf(in.State) == theme.ClassError {
		cells[len(cells)-1] = th.ClassStyle(theme.ClassError).UnsetBold().Render(cells[len(cells)-1])
	}
	line = strings.Join(cells, " ")
	m.rowCache[in.Key] = &rowEntry{version: in.Version, width: m.w, frame: frame, age: age, last: last, line: line}
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

func tableHeader(c columns) string {
	cells := []string{fit("STATE", c.state, ""), fit("NAMESPACE/NAME", c.name, ""), fit("KIND", c.kind, ""), fit("READY", c.ready, ""), fit("AGE", c.age, "")}
	if c.last > 0 {
		cells = append(cells, fit("RECONCILED", c.last, ""))
	}
	cells = append(cells, fit("MESSAGE", c.msg, ""))
	return strings.Join(cells, " ")
}

// counts renders "12 instances  ✓ 8 synced  ✗ 1 error" over all instances.
func (m *Model) counts() string {
	var n [theme.NumClasses]int
	for _, in := range m.snap.Instances {
		n[theme.ClassOf(in.State)]++
	}
	parts := []string{fmt.Sprintf("%d instances", len(m.snap.Instances))}
	if m.query != "" {
		parts[0] = fmt.Sprintf("%d/%d instances", len(m.rows), len(m.snap.Instances))
	}
	for _, c := range theme.Classes {
		if n[c] == 0 {
			continue
		}
		parts = append(parts, m.th.ClassStyle(c).Render(fmt.Sprintf("%s %d %s", m.th.ClassGlyph(c, 0), n[c], c.Word())))
	}
	return strings.Join(parts, "  ")
}

// instancesBody renders the table into h lines.
func (m *Model) instancesBody(h int) []string {
	out := make([]string, 0, h)
	c := tableColumns(m.w)
	out = append(out, m.th.Header.Render(fit(tableHeader(c), m.w, "")))
	rows := h - 1
	if len(m.rows) == 0 {
		msg := "No instances yet. Create one with kubectl apply, or run with --demo."
		if m.query != "" {
			msg = fmt.Sprintf("No instance matches %q (esc clears the filter).", m.query)
		}
		if len(m.snap.Graphs) > 0 && m.query == "" {
			kinds := make([]string, 0, len(m.snap.Graphs))
			for _, g := range m.snap.Graphs {
				kinds = append(kinds, g.Kind)
			}
			msg = "No instances yet of " + strings.Join(kinds, ", ") + "."
		}
		out = append(out, m.th.Dim.Render(fit("  "+msg, m.w, m.th.G.Ellipsis)))
		return out
	}
	// Keep the cursor visible; render only the rows that show.
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if m.cursor >= m.offset+rows {
		m.offset = m.cursor - rows + 1
	}
	m.offset = clamp(m.offset, 0, max(len(m.rows)-rows, 0))
	end := min(m.offset+rows, len(m.rows))
	for i := m.offset; i < end; i++ {
		out = append(out, m.row(m.rows[i], c, i == m.cursor))
	}
	return out
}

// statusLine is the top bar: where, scope, mode, queue, rate, watches.
func (m *Model) statusLine() string {
	s, th := m.snap, m.th
	sep := th.Dim.Render(" " + th.G.Sep + " ")
	where := s.Cluster.Context
	if s.Cluster.Demo {
		where = "demo"
	}
	if where == "" {
		where = "cluster"
	}
	if s.Cluster.Server != "" && m.w >= 120 {
		where += " (" + s.Cluster.Server + ")"
	}
	narrow := m.w < 120
	ns := s.Cluster.Namespace
	switch {
	case ns == "" && narrow:
		ns = "all ns"
	case ns == "":
		ns = "all namespaces"
	default:
		ns = "ns " + ns
	}
	mode := th.ClassStyle(theme.ClassSynced).Render(th.G.Dot + " reconciling")
	if !s.Mode.Reconciling {
		who := s.Mode.Holder
		if who == "" {
			who = "nobody"
		}
		if s.Mode.Forced {
			mode = th.Warn.Render(th.G.Dot + " observing (--observe)")
		} else {
			mode = th.Warn.Render(th.G.Dot + " observing, lease held by " + who)
			if narrow {
				mode = th.Warn.Render(th.G.Dot + " observing (" + who + ")")
			}
		}
	}
	synced, healthy := 0, 0
	for _, w := range s.Watches {
		if w.Synced {
			synced++
		}
		if w.Healthy {
			healthy++
		}
	}
	watches := fmt.Sprintf("watches %d/%d", healthy, len(s.Watches))
	if synced < len(s.Watches) {
		watches += fmt.Sprintf(" (%d syncing)", len(s.Watches)-synced)
	}
	if healthy < len(s.Watches) {
		watches = th.Loud.Render(" " + th.G.Warn + " " + watches + " ")
	}
	queue, rate := fmt.Sprintf("queue %d", s.Engine.QueueDepth), fmt.Sprintf("%.1f rec/s", s.Engine.ReconcilesPerSecond)
	if narrow {
		queue, rate = fmt.Sprintf("q %d", s.Engine.QueueDepth), fmt.Sprintf("%.1f/s", s.Engine.ReconcilesPerSecond)
	}
	parts := []string{th.Title.Render("kroscope"), where, ns, mode, queue, rate, watches}
	if m.w >= 140 && s.Engine.Workers > 0 {
		parts = append(parts[:6], fmt.Sprintf("workers %d/%d", s.Engine.BusyWorkers, s.Engine.Workers), watches)
	}
	if s.Engine.APIErrors > 0 {
		parts = append(parts, th.ClassStyle(theme.ClassError).Render(fmt.Sprintf("api errors %d", s.Engine.APIErrors)))
	}
	return clip(strings.Join(parts, sep), m.w, th.G.Ellipsis)
}

// watchAlarm is the loud line shown while any watch is broken.
func (m *Model) watchAlarm() string {
	var bad []string
	var since time.Time
	for _, w := range m.snap.Watches {
		if !w.Healthy {
			s := w.Name
			if w.Err != "" {
				s += ": " + w.Err
			}
			bad = append(bad, s)
			if since.IsZero() || w.Since.Before(since) {
				since = w.Since
			}
		}
	}
	if len(bad) == 0 {
		return ""
	}
	s := fmt.Sprintf(" %s WATCH LOST %s ago %s %s, state may be stale", m.th.G.Warn, ago(m.now(), since), m.th.G.Sep, strings.Join(bad, "; "))
	return m.th.Loud.Render(fit(s, m.w, m.th.G.Ellipsis))
}
