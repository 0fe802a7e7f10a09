package tui

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/kroscope/kroscope/theme"
)

// table is the one table component: the instance list, the graphs list
// and a plan's blast radius are configurations of it. Its columns are
// data (column); it owns the filter (typed with /), the sort (the sorted
// column's arrow, the same key again reverses), the cursor and the
// first row shown, keeps the cursor on its row across updates once the
// user chose one, says "1-19 of 36" when not every row fits, and declares
// the actions all of that takes. The screen owning it computes the rows
// (setRows) from the query and the sort, and draws what is around them.
type table[R any, K, S comparable] struct {
	c     *common
	cols  []column[R]
	sorts []tableSort // the sorts, in the order the sort key steps through
	id    func(R) K   // the identity the cursor keeps
	// stamp, when set, is what a row's line depends on besides the
	// columns' widths and the theme: the line is drawn again only when it
	// changed (the instance list's rows at 10,000 instances).
	stamp func(R) S
	noun  string // "graphs": the flash says "graphs sorted by name"
	// rebuild is the screen's: it computes the rows (setRows) from the
	// query and the sort when they, or the snapshot, changed.
	rebuild func()

	rows           []R
	cursor, offset int
	sel            K
	moved          bool // the user chose a row: the cursor follows it

	query  string
	input  textinput.Model
	typing bool
	sortBy int
	desc   bool

	h          int // the lines it has (the header, then the rows)
	shown      []R // the rows drawn (width rules may fit them)
	cache      map[K]rowLine[S]
	ws         []int // the last widths (kept while they do not change)
	scratch    []int
	filterActs []action
}

// column is one column of a table, as data: adding a column to a table
// is one entry.
type column[R any] struct {
	header string // its label
	// short is the label when the column is narrower than header and the
	// sort arrow ("NAME" for "NAMESPACE/NAME"); "" keeps header.
	short string
	// width is the column's width now (0 hides it); nil makes the column
	// flexible: flex then gets what the fixed columns leave (rest) and
	// says how much of it the column takes.
	width func() int
	flex  func(rest int) int
	// least is a flexible column's narrowest useful width: while the
	// fixed columns leave less, those with a drop rank give way, lowest
	// first, then the one with a floor shrinks down to it.
	least func() int
	drop  int
	floor int
	cell  func(r R, w int) string // its text in w cells
	// style draws the fitted cell of a row that is not under the cursor
	// (nil: plain).
	style func(r R, cell string) string
	sort  int  // 1 + the index of the sort it is ordered by; 0: none
	right bool // aligned right
}

// tableSort is one order of the rows: its word, and the action that
// chooses it (shared names go through share).
type tableSort struct {
	word string // "name", "last reconcile"
	act  action // its do is filled by the table
}

// rowLine is one drawn row and what it was drawn from.
type rowLine[S comparable] struct {
	stamp  S
	widths []int
	th     *theme.Theme
	line   string
}

// newTable is a table whose filter prompt shows placeholder.
func newTable[R any, K, S comparable](c *common, placeholder string, cols []column[R], sorts []tableSort, id func(R) K, rebuild func()) *table[R, K, S] {
	in := textinput.New()
	in.Prompt = "/"
	in.Placeholder = placeholder
	t := &table[R, K, S]{c: c, cols: cols, sorts: sorts, id: id, input: in, rebuild: rebuild}
	t.filterActs = t.filterActions()
	return t
}

// setRows takes the rows in the order to show; the cursor stays on its
// row when the user chose one.
func (t *table[R, K, S]) setRows(rows []R) {
	t.rows = rows
	t.cursor = clamp(t.cursor, 0, len(rows)-1)
	if t.moved {
		for i, r := range rows {
			if t.id(r) == t.sel {
				t.cursor = i
				break
			}
		}
	}
	if t.cache != nil && len(t.cache) > 2*len(rows)+64 {
		t.cache = nil // forget rows that are gone
	}
}

// selected is the row under the cursor.
func (t *table[R, K, S]) selected() (R, bool) {
	if t.cursor >= 0 && t.cursor < len(t.rows) {
		return t.rows[t.cursor], true
	}
	var zero R
	return zero, false
}

// follow pins the cursor to the row under it.
func (t *table[R, K, S]) follow() {
	if r, ok := t.selected(); ok {
		t.sel, t.moved = t.id(r), true
	}
}

func (t *table[R, K, S]) move(d int) {
	t.cursor = clamp(t.cursor+d, 0, len(t.rows)-1)
	t.follow()
}

func (t *table[R, K, S]) pageSize() int { return max(t.h-2, 1) }

// toFirst puts the cursor on the first row: filtering does.
func (t *table[R, K, S]) toFirst() {
	t.cursor, t.offset = 0, 0
	t.follow()
}

// setQuery filters by q.
func (t *table[R, K, S]) setQuery(q string) {
	if q == t.query {
		return
	}
	t.query = q
	t.rebuild()
	t.toFirst()
}

// setSort sorts by the i-th sort; the same again reverses the order.
func (t *table[R, K, S]) setSort(i int) {
	if t.sortBy == i {
		t.desc = !t.desc
	} else {
		t.sortBy, t.desc = i, false
	}
	// The cursor stays on its row, wherever the order puts it (it went
	// to row 1, losing the user's place).
	t.follow()
	t.rebuild()
	dir := "ascending"
	if t.desc {
		dir = "descending"
	}
	prefix := ""
	if t.noun != "" {
		prefix = t.noun + " "
	}
	t.c.host.flash(prefix+"sorted by "+t.sorts[i].word+", "+dir, false)
}

// startFilter gives the keyboard to the filter prompt.
func (t *table[R, K, S]) startFilter() tea.Cmd {
	t.typing = true
	t.input.SetValue(t.query)
	t.input.CursorEnd()
	return t.input.Focus()
}

// filterTo sets the filter to q ("" clears it), as if typed.
func (t *table[R, K, S]) filterTo(q string) {
	t.input.SetValue(q)
	t.setQuery(q)
}

// filterActions run while the filter is typed; other keys edit it.
func (t *table[R, K, S]) filterActions() []action {
	done := func(clear bool) func() tea.Cmd {
		return do0(func() {
			t.typing = false
			t.input.Blur()
			if clear {
				t.filterTo("")
			}
		})
	}
	return offer(
		share("confirm", "keep the filter", "keep", done(false)),
		share("back", "clear the filter", "clear", done(true)),
	)
}

// update takes the table's messages: clicks (line 0 is the counts,
// line 1 the header), the wheel, and keys typed into the filter; the
// rows are rebuilt when the filter changed.
func (t *table[R, K, S]) update(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case tea.MouseClickMsg:
		if i := t.offset + msg.Y - 2; msg.Button == tea.MouseLeft && msg.Y >= 2 && i < len(t.rows) {
			t.cursor = i
			t.follow()
		}
		return nil, true
	case tea.MouseWheelMsg:
		if msg.Button == tea.MouseWheelUp {
			t.move(-3)
		} else if msg.Button == tea.MouseWheelDown {
			t.move(3)
		}
		return nil, true
	}
	if !t.typing {
		return nil, false
	}
	var cmd tea.Cmd
	t.input, cmd = t.input.Update(msg)
	if _, key := msg.(tea.KeyPressMsg); key {
		t.setQuery(t.input.Value())
	}
	return cmd, true
}

// actions are the table's: the filter, the sorts, the cursor's moves.
func (t *table[R, K, S]) actions(filterHelp string) (filter action, sorts, moves []action) {
	filter = share("filter", filterHelp, "filter", t.startFilter)
	for i, s := range t.sorts {
		a := s.act
		a.do = do0(func() { t.setSort(i) })
		sorts = append(sorts, a)
	}
	if len(t.sorts) > 0 {
		next := share("sort", "sort by the next column", "sort", do0(func() { t.setSort((t.sortBy + 1) % len(t.sorts)) }))
		sorts = append([]action{next}, sorts...)
	}
	move := func(n func() int) func() tea.Cmd { return do0(func() { t.move(n()) }) }
	by := func(n int) func() int { return func() int { return n } }
	moves = offer(
		share("up", "up", "", move(by(-1))),
		share("down", "down", "", move(by(1))),
		share("pageUp", "page up", "", move(func() int { return -t.pageSize() })),
		share("pageDown", "page down", "", move(t.pageSize)),
		share("top", "top", "", move(by(-1<<30))),
		share("bottom", "bottom", "", move(by(1<<30))),
	)
	return filter, offer(sorts...), moves
}

// prompt is the filter's line: the prompt while typed, else the filter
// in force.
func (t *table[R, K, S]) prompt(w int) string {
	th := t.c.th
	switch {
	case t.typing:
		return fit(t.input.View(), w, "")
	case t.query != "":
		return fit(th.Dim.Render("filter: "+t.query), w, th.G.Ellipsis)
	}
	return ""
}

// scrollTo keeps the cursor in the h-1 rows under the header and
// sets the rows shown.
func (t *table[R, K, S]) scrollTo(h int) {
	t.h, t.shown = h, nil
	if len(t.rows) == 0 {
		return
	}
	rows := max(h-1, 1)
	t.offset = clamp(t.offset, max(t.cursor-rows+1, 0), t.cursor)
	t.offset = clamp(t.offset, 0, max(len(t.rows)-rows, 0))
	t.shown = t.rows[t.offset:min(t.offset+rows, len(t.rows))]
}

// render lays the table out in h lines of w cells (the rows that fit
// under the header); empty is the line under the header when there are
// no rows.
func (t *table[R, K, S]) render(h, w int, empty string) []string {
	t.scrollTo(h)
	if !t.c.th.Marks {
		return t.body(t.shown, t.widths(w), w, empty)
	}
	// No attribute shows the cursor (TERM=dumb): a column of its own
	// points at its row.
	out := t.body(t.shown, t.widths(w-2), w-2, empty)
	for i := range out {
		mark := "  "
		if i > 0 && t.offset+i-1 == t.cursor && len(t.rows) > 0 {
			mark = t.c.th.G.Cursor + " "
		}
		out[i] = mark + out[i]
	}
	return out
}

// position is "1-19 of 36" when not every row fits, else "".
func (t *table[R, K, S]) position() string {
	rows := max(t.h-1, 1)
	if len(t.rows) <= rows {
		return ""
	}
	return fmt.Sprintf("%d-%d of %d", t.offset+1, min(t.offset+rows, len(t.rows)), len(t.rows))
}

// widths lays the columns out in w cells: the fixed ones their width,
// the flexible ones what is left, one cell between two columns. When
// what is left is less than the flexible columns need, the columns with
// a drop rank give way in rank order, then the one with a floor shrinks.
func (t *table[R, K, S]) widths(w int) []int {
	if len(t.scratch) != len(t.cols) {
		t.scratch = make([]int, len(t.cols))
	}
	ws := t.scratch
	used, least := 0, 0
	for i, c := range t.cols {
		if c.width == nil {
			ws[i] = -1 // flexible: filled below
			if c.least != nil {
				least += c.least()
			}
			used++
			continue
		}
		if ws[i] = c.width(); ws[i] > 0 {
			used += ws[i] + 1
		}
	}
	used-- // no gap after the last column
	for rank := 1; w-used < least; rank++ {
		i := slices.IndexFunc(t.cols, func(c column[R]) bool { return c.drop == rank })
		if i < 0 {
			break
		}
		if ws[i] > 0 {
			used -= ws[i] + 1
			ws[i] = 0
		}
	}
	for i, c := range t.cols {
		if over := used + least - w; c.floor > 0 && ws[i] > 0 && over > 0 {
			n := max(ws[i]-over, c.floor)
			used -= ws[i] - n
			ws[i] = n
		}
	}
	rest := w - used
	for i, c := range t.cols {
		if ws[i] == -1 {
			ws[i] = c.flex(rest)
			rest -= ws[i]
		}
	}
	if !slices.Equal(ws, t.ws) {
		t.ws = slices.Clone(ws) // the row cache keeps them: a new slice per change
	}
	return t.ws
}

// header names the shown columns; the sorted one carries an arrow.
func (t *table[R, K, S]) header(ws []int, w int) string {
	g := t.c.th.G
	cells := make([]string, 0, len(ws))
	for i, c := range t.cols {
		if ws[i] <= 0 && c.width != nil {
			continue
		}
		label := c.header
		if c.short != "" && ws[i] < len(label)+1 { // room for the arrow
			label = c.short
		}
		if c.sort > 0 && c.sort-1 == t.sortBy {
			if t.desc {
				label += g.SortDown
			} else {
				label += g.SortUp
			}
		}
		cells = append(cells, t.align(c, label, ws[i], ""))
	}
	return t.c.th.Header.Render(fit(strings.Join(cells, " "), w, ""))
}

func (t *table[R, K, S]) align(c column[R], s string, w int, el string) string {
	if c.right {
		return fitLeft(s, w)
	}
	return fit(s, w, el)
}

// drawRow draws one row in w cells: styled by its columns, or under the
// cursor in the theme's selection.
func (t *table[R, K, S]) drawRow(r R, ws []int, w int, selected bool) string {
	th := t.c.th
	el := th.G.Ellipsis
	var stamp S
	if t.stamp != nil && !selected {
		stamp = t.stamp(r)
		if e, ok := t.cache[t.id(r)]; ok && e.stamp == stamp && e.th == th && slices.Equal(e.widths, ws) {
			return e.line
		}
	}
	cells := make([]string, 0, len(ws))
	for i, c := range t.cols {
		if ws[i] <= 0 && c.width != nil {
			continue
		}
		cell := t.align(c, c.cell(r, ws[i]), ws[i], el)
		if !selected && c.style != nil {
			cell = c.style(r, cell)
		}
		cells = append(cells, cell)
	}
	line := fit(strings.Join(cells, " "), w, el)
	if selected {
		return th.Selected.Render(line)
	}
	if t.stamp != nil {
		if t.cache == nil {
			t.cache = map[K]rowLine[S]{}
		}
		t.cache[t.id(r)] = rowLine[S]{stamp: stamp, widths: ws, th: th, line: line}
	}
	return line
}

// body is the header and the rows shown, w cells wide.
func (t *table[R, K, S]) body(shown []R, ws []int, w int, empty string) []string {
	out := make([]string, 0, len(shown)+1)
	out = append(out, t.header(ws, w))
	if len(t.rows) == 0 {
		// Wrapped: why the table is empty is worth reading whole.
		for _, l := range wrap(empty, max(w-2, 8)) {
			out = append(out, t.c.th.Dim.Render(fit("  "+l, w, t.c.th.G.Ellipsis)))
		}
		return out
	}
	for i, r := range shown {
		out = append(out, t.drawRow(r, ws, w, t.offset+i == t.cursor))
	}
	return out
}
