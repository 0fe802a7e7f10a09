package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/charmbracelet/x/ansi"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/theme"
)

// treeKey is what a tree layout depends on.
type treeKey struct {
	key     state.InstanceKey
	version uint64
	ascii   bool
	layered bool
}

// tree is an instance's graph laid out as a tree; it changes only with the
// instance's Version.
type tree struct {
	key    treeKey
	order  []string // node ids in display order
	prefix []string // tree connectors before each node
	needs  []string // "needs: a, b" for nodes with several parents
}

// layoutTree lays the graph out as a tree: roots are resources with no
// dependency; every other resource hangs under its last dependency in
// topological order (the one it waits for longest), and a node with several
// dependencies says "needs: a, b" so no edge is hidden.
func layoutTree(in *state.Instance, branch, last, vert, space string) (order, prefix, needs []string) {
	ids := make(map[string]int, len(in.Resources))
	for i, r := range in.Resources {
		ids[r.ID] = i
	}
	children := make(map[string][]string, len(in.Resources))
	var roots []string
	needOf := make(map[string]string, len(in.Resources))
	for _, r := range in.Resources {
		parent, best := "", -1
		var deps []string
		for _, d := range r.Dependencies {
			if j, ok := ids[d]; ok {
				deps = append(deps, d)
				if j > best {
					parent, best = d, j
				}
			}
		}
		if len(deps) > 1 {
			needOf[r.ID] = "needs: " + strings.Join(deps, ", ")
		}
		if parent == "" {
			roots = append(roots, r.ID)
		} else {
			children[parent] = append(children[parent], r.ID)
		}
	}
	var walk func(id, indent string, isLast, root bool)
	walk = func(id, indent string, isLast, root bool) {
		p := ""
		next := indent
		if !root {
			if isLast {
				p, next = indent+last, indent+space
			} else {
				p, next = indent+branch, indent+vert
			}
		}
		order = append(order, id)
		prefix = append(prefix, p)
		needs = append(needs, needOf[id])
		kids := children[id]
		for i, k := range kids {
			walk(k, next, i == len(kids)-1, false)
		}
	}
	for _, r := range roots {
		walk(r, "", true, true)
	}
	return order, prefix, needs
}

// layoutLayers lays the graph out layer by layer (the instance's Layers,
// roots first), the layer number before each node and every dependency
// named with ←, so no parent is hidden as in a tree. The order is the
// cursor's, as in the tree.
func layoutLayers(in *state.Instance, branch, last, back string) (order, prefix, needs []string) {
	seen := map[string]bool{}
	layers := in.Layers
	var rest []string
	for _, r := range in.Resources {
		found := false
		for _, l := range layers {
			if slices.Contains(l, r.ID) {
				found = true
				break
			}
		}
		if !found {
			rest = append(rest, r.ID)
		}
	}
	if len(rest) > 0 {
		layers = append(append([][]string(nil), layers...), rest)
	}
	w := len(strconv.Itoa(max(len(layers)-1, 0)))
	for li, l := range layers {
		for j, id := range l {
			r := in.Resource(id)
			if r == nil || seen[id] {
				continue
			}
			seen[id] = true
			b := branch
			if j == len(l)-1 {
				b = last
			}
			order = append(order, id)
			prefix = append(prefix, fmt.Sprintf("%*d ", w, li)+b)
			note := ""
			if len(r.Dependencies) > 0 {
				note = back + " " + strings.Join(r.Dependencies, ", ")
			}
			needs = append(needs, note)
		}
	}
	return order, prefix, needs
}

// graphPane is the instance's tree with a node cursor. The cursor stays on
// the same resource id across updates.
type graphPane struct {
	c    *common
	tree tree
	// layered shows the graph layer by layer, every dependency named with
	// ←, as `kroscope graph` prints it (g toggles); else the tree.
	layered bool
	node    int
	nodeID  string
	offset  int

	w, h  int
	drawn graphKey
	lines []string
}

type graphKey struct {
	tree                      treeKey
	node, offset, frame, w, h int
	th                        *theme.Theme
}

func (g *graphPane) SetSize(w, h int) { g.w, g.h = w, h }

func (g *graphPane) View() string { return strings.Join(g.lines, "\n") }

// layout lays the instance out when its Version changed.
func (g *graphPane) layout(in *state.Instance) {
	k := treeKey{key: in.Key, version: in.Version, ascii: g.c.opts.ASCII, layered: g.layered}
	if g.tree.order != nil && g.tree.key == k {
		return
	}
	G := g.c.th.G
	var order, prefix, needs []string
	if g.layered {
		back := "←"
		if g.c.opts.ASCII {
			back = "<-"
		}
		order, prefix, needs = layoutLayers(in, G.TreeBranch, G.TreeLast, back)
	} else {
		order, prefix, needs = layoutTree(in, G.TreeBranch, G.TreeLast, G.TreeVert, G.TreeSpace)
	}
	g.tree = tree{key: k, order: order, prefix: prefix, needs: needs}
	// Keep the cursor on the same resource.
	for i, id := range order {
		if id == g.nodeID {
			g.node = i
			return
		}
	}
	g.node = clamp(g.node, 0, len(order)-1)
	if g.node < len(order) {
		g.nodeID = order[g.node]
	}
}

func (g *graphPane) move(d int) {
	g.select1(clamp(g.node+d, 0, len(g.tree.order)-1))
}

func (g *graphPane) select1(i int) {
	if i >= 0 && i < len(g.tree.order) {
		g.node, g.nodeID = i, g.tree.order[i]
	}
}

// reasonMin is the narrowest reason column worth drawing; reasonWant the
// width it takes from the "needs:" notes when they compete.
const (
	reasonMin  = 16
	reasonWant = 40
)

// reasons is each shown row's short message (why it waits, its error, what
// holds its deletion), as crossplane's trace has a STATUS column, and the
// column where it starts; none when the pane is too narrow for it.
func (g *graphPane) reasons(in *state.Instance, end, w int) (map[string]string, int) {
	t := &g.tree
	leftW, bareW := 0, 0 // with and without the "needs:" notes
	out := map[string]string{}
	for i := g.offset; i < end; i++ {
		r := in.Resource(t.order[i])
		if r == nil {
			continue
		}
		obj := r.Name
		if obj == "" {
			obj = "(not rendered)"
		}
		if r.External {
			obj += " [external]"
		}
		lw := 2 + min(ansi.StringWidth(t.prefix[i]), max(g.w/3, 9)) + 2 + len(r.ID) + 2 + len(r.Kind) + 1 + ansi.StringWidth(obj)
		bareW = max(bareW, lw)
		if t.needs[i] != "" {
			lw += 2 + len(t.needs[i])
		}
		leftW = max(leftW, lw)
		why := reason(r)
		if r.Phase().Class() == state.ClassFailed && r.Err != "" {
			why, _, _ = strings.Cut(r.Err, "\n")
		}
		if r.Phase() == state.PhaseSynced || r.Phase() == state.PhaseDeleted {
			why = "" // the state says it all
		}
		if why != "" {
			out[r.ID] = why
		}
	}
	want := reasonWant
	for _, why := range out {
		want = max(want, ansi.StringWidth(why))
	}
	if w-leftW-2 < want && !g.layered { // the layered view is for its ← notes
		// Cut the long "needs:" notes (with an ellipsis; the inspector and
		// the layered view name every dependency) before the reasons.
		leftW = max(bareW, w-2-want)
	}
	if len(out) == 0 || w-leftW-2 < reasonMin {
		return nil, 0
	}
	return out, leftW
}

// natural is the width the graph's rows want whole: names, notes, the
// longest reason and the state column.
func (g *graphPane) natural(in *state.Instance) int {
	t := &g.tree
	_, stW := g.stateWords(in)
	want := 0
	for i, id := range t.order {
		r := in.Resource(id)
		if r == nil {
			continue
		}
		lw := 2 + ansi.StringWidth(t.prefix[i]) + 2 + len(r.ID) + 2 + len(r.Kind) + 1 + max(ansi.StringWidth(r.Name), len("(not rendered)")) + 12
		if t.needs[i] != "" {
			lw += 2 + len(t.needs[i])
		}
		why := reason(r)
		if r.Phase().Class() == state.ClassFailed && r.Err != "" {
			why, _, _ = strings.Cut(r.Err, "\n")
		}
		want = max(want, lw+2+ansi.StringWidth(why))
	}
	return want + stW
}

// needsNote is "  needs: a, b" after a row's name; beside a reason it gets
// only the room left before the reason column, down to an ellipsis.
func needsNote(needs string, beside bool, room int, ellipsis string) string {
	if needs == "" {
		return ""
	}
	note := "  " + needs
	if !beside || len(note) <= room {
		return note
	}
	if room < 2+ansi.StringWidth(ellipsis) {
		return ""
	}
	return fit(note, room, ellipsis)
}

// indexOf is the display position of a resource id, or -1.
func (g *graphPane) indexOf(id string) int {
	for i, o := range g.tree.order {
		if o == id {
			return i
		}
	}
	return -1
}

// Update takes clicks relative to the pane's top line (the title).
func (g *graphPane) Update(msg tea.Msg) tea.Cmd {
	if c, ok := msg.(tea.MouseClickMsg); ok && c.Button == tea.MouseLeft && c.Y >= 1 {
		g.select1(g.offset + c.Y - 1)
	}
	return nil
}

// stateWords are the state column's words: full unless the pane is too
// narrow for them next to a readable name, then the short forms.
func (g *graphPane) stateWords(in *state.Instance) (words map[string]string, width int) {
	words = make(map[string]string, len(in.Resources))
	full := 0
	for i := range in.Resources {
		full = max(full, len(in.Resources[i].Phase().Word()))
	}
	room := 34 // for a readable name
	if g.layered {
		room = 50 // and its ← dependencies
	}
	short := g.w-full-1 < room
	for i := range in.Resources {
		r := &in.Resources[i]
		w := r.Phase().Word()
		if short {
			w = r.Phase().Short()
		}
		words[r.ID] = w
		width = max(width, len(w))
	}
	return words, width + 2 // a space either side
}

// prepare draws the tree into w×h, keeping the cursor visible.
func (g *graphPane) prepare(in *state.Instance) {
	g.layout(in)
	rows := g.h - 1
	if g.node < g.offset {
		g.offset = g.node
	}
	if g.node >= g.offset+rows {
		g.offset = g.node - rows + 1
	}
	g.offset = clamp(g.offset, 0, max(len(g.tree.order)-rows, 0))
	k := graphKey{tree: g.tree.key, node: g.node, offset: g.offset, frame: g.c.frame, w: g.w, h: g.h, th: g.c.th}
	if g.lines != nil && k == g.drawn {
		return
	}
	g.drawn = k
	g.lines = block(g.draw(in, rows), g.w, g.h, g.c.th.G.Ellipsis)
}

func (g *graphPane) draw(in *state.Instance, rows int) []string {
	th, w, t := g.c.th, g.w, &g.tree
	ready, total := in.ReadyCount()
	view := "GRAPH "
	if g.layered {
		view = "GRAPH by layer "
	}
	end := min(g.offset+rows, len(t.order))
	title := view + strconv.Itoa(ready) + "/" + strconv.Itoa(total) + " ready"
	if rows < len(t.order) { // say that nodes are out of sight, and which show
		title += fmt.Sprintf("  (%d-%d of %d, j/k scroll)", g.offset+1, end, len(t.order))
	}
	out := []string{th.Header.Render(fit(title, w, th.G.Ellipsis))}
	if len(t.order) == 0 {
		return append(out, th.Dim.Render(fit("  no resources", w, "")))
	}
	words, stW := g.stateWords(in)
	if w < 30 {
		stW = 0 // too narrow for a column: the glyph still tells the state
	}
	reasons, reasonAt := g.reasons(in, end, w-stW)
	for i := g.offset; i < end; i++ {
		r := in.Resource(t.order[i])
		if r == nil {
			continue
		}
		sel := i == g.node
		cur := "  "
		if sel {
			cur = th.G.Cursor + " "
		}
		obj := r.Name
		if obj == "" {
			obj = "(not rendered)"
		}
		if r.External {
			obj += " [external]"
		}
		// Deep chains would push names off screen: keep only the innermost
		// levels of indentation, marked by an ellipsis.
		prefix := t.prefix[i]
		if maxIndent := max(w/3, 9); ansi.StringWidth(prefix) > maxIndent {
			prefix = th.G.Ellipsis + ansi.TruncateLeft(prefix, ansi.StringWidth(prefix)-maxIndent+ansi.StringWidth(th.G.Ellipsis), "")
		}
		// Right-aligned: the column's right edge is the pane's, whatever
		// states this instance has.
		word := " " + fitLeft(words[r.ID], stW-2) + " "
		if sel {
			left := prefix + th.Glyph(r.State, g.c.frame) + " " + r.ID + "  " + r.Kind + " " + obj
			why := reasons[r.ID]
			left += needsNote(t.needs[i], why != "", reasonAt-ansi.StringWidth(cur+left), th.G.Ellipsis)
			if why != "" {
				left = fit(cur+left, reasonAt, "")[len(cur):] + "  " + why
			}
			out = append(out, th.Selected.Render(fit(cur+left, w-stW, th.G.Ellipsis)+word))
			continue
		}
		styled := th.Dim.Render(prefix) + th.State(r.State, "", g.c.frame) + " " + r.ID + "  " + th.Dim.Render(r.Kind) + " " + obj
		why := reasons[r.ID]
		if n := needsNote(t.needs[i], why != "", reasonAt-ansi.StringWidth(cur+styled), th.G.Ellipsis); n != "" {
			styled += th.Dim.Render(n)
		}
		if why != "" {
			st := th.Dim
			if r.Phase().Class() == state.ClassFailed {
				st = th.Style(r.State)
			}
			styled = fit(cur+styled, reasonAt, "")[len(cur):] + "  " + st.Render(why)
		}
		line := fit(cur+styled, w-stW, th.G.Ellipsis)
		if stW > 0 {
			line += th.Style(r.State).Render(word)
		}
		out = append(out, line)
	}
	return out
}
