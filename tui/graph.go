package tui

import (
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/kroscope/kroscope/engine/state"
)

// graphEntry caches an instance's tree layout; it changes only with the
// instance's Version.
type graphEntry struct {
	key     state.InstanceKey
	version uint64
	ascii   bool
	order   []string // node ids in display order
	prefix  []string // tree connectors before each node
	needs   []string // "needs: a, b" for nodes with several parents
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

func (m *Model) graph(in *state.Instance) *graphEntry {
	g := &m.graphCache
	if g.order == nil || g.key != in.Key || g.version != in.Version || g.ascii != m.opts.ASCII {
		G := m.th.G
		order, prefix, needs := layoutTree(in, G.TreeBranch, G.TreeLast, G.TreeVert, G.TreeSpace)
		*g = graphEntry{key: in.Key, version: in.Version, ascii: m.opts.ASCII, order: order, prefix: prefix, needs: needs}
	}
	return g
}

// graphOrder is the node order the cursor walks.
func (m *Model) graphOrder(in *state.Instance) []string { return m.graph(in).order }

// graphPane renders the tree into w×h, keeping the cursor visible.
func (m *Model) graphPane(in *state.Instance, w, h int) []string {
	th := m.th
	g := m.graph(in)
	ready, total := in.ReadyCount()
	title := th.Header.Render(fit("GRAPH "+strconv.Itoa(ready)+"/"+strconv.Itoa(total)+" ready", w, ""))
	out := []string{title}
	rows := h - 1
	if len(g.order) == 0 {
		return append(out, th.Dim.Render(fit("  no resources", w, "")))
	}
	if m.node < m.nodeOffset {
		m.nodeOffset = m.node
	}
	if m.node >= m.nodeOffset+rows {
		m.nodeOffset = m.node - rows + 1
	}
	m.nodeOffset = clamp(m.nodeOffset, 0, max(len(g.order)-rows, 0))
	end := min(m.nodeOffset+rows, len(g.order))
	for i := m.nodeOffset; i < end; i++ {
		r := in.Resource(g.order[i])
		if r == nil {
			continue
		}
		sel := i == m.node
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
		// A right-hand state column keeps the word readable however deep
		// the tree goes; it is dropped when the pane is too narrow.
		stW := 0
		if w >= 40 {
			stW = 15
		}
		// Deep chains would push names off screen: keep only the innermost
		// levels of indentation, marked by an ellipsis.
		prefix := g.prefix[i]
		if maxIndent := max(w/3, 9); ansi.StringWidth(prefix) > maxIndent {
			prefix = th.G.Ellipsis + ansi.TruncateLeft(prefix, ansi.StringWidth(prefix)-maxIndent+ansi.StringWidth(th.G.Ellipsis), "")
		}
		left := prefix + th.Glyph(r.State, m.frame) + " " + r.ID + "  " + r.Kind + " " + obj
		if g.needs[i] != "" {
			left += "  " + g.needs[i]
		}
		if sel {
			st := th.Selected
			if m.focus != paneGraph {
				st = th.Bold
			}
			line := fit(cur+left, w-stW, th.G.Ellipsis)
			if stW > 0 {
				line += fit(" "+stateWord(r.State), stW, th.G.Ellipsis)
			}
			out = append(out, st.Render(line))
			continue
		}
		styled := th.Dim.Render(prefix) + th.State(r.State, "", m.frame) + " " + r.ID + "  " + th.Dim.Render(r.Kind) + " " + obj
		if g.needs[i] != "" {
			styled += "  " + th.Dim.Render(g.needs[i])
		}
		line := fit(cur+styled, w-stW, th.G.Ellipsis)
		if stW > 0 {
			line += th.Style(r.State).Render(fit(" "+stateWord(r.State), stW, th.G.Ellipsis))
		}
		out = append(out, line)
	}
	return out
}
