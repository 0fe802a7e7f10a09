package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// The graphs screens' panes (numbered apart from actions.go's).
const (
	paneGraphs       pane = 100 + iota // the graphs table
	paneGraphsFilter                   // typing a graphs filter
	paneGraph                          // one graph: layers, schema, status, YAML, Events
)

// The graphs screens' views, for Views.
const viewGraphs = "graphs"

func graphsViews() []View {
	out := []View{{Name: viewGraphs}}
	for t := rgdTab(0); t < numRGDTabs; t++ {
		out = append(out, View{Name: t.view()})
	}
	return out
}

// showGraphs brings the graphs screen to the front: the one on the stack
// when there is one (its filter and cursor kept), else a new one over the
// list.
func (m *Model) showGraphs() tea.Cmd {
	for i, s := range m.stack {
		if _, ok := s.(*graphsScreen); ok {
			m.stack = m.stack[:i+1]
			return nil
		}
	}
	for len(m.stack) > 1 {
		m.pop()
	}
	m.push(newGraphsScreen(m.c))
	return nil
}

// openGraph opens the graph named name (case-insensitively; its kind
// names it too) over the graphs screen, or says there is none.
func (m *Model) openGraph(name string) {
	for _, g := range m.snap.Graphs {
		if strings.EqualFold(g.Name, name) || (g.Kind != "" && strings.EqualFold(g.Kind, name)) {
			m.push(newRGDScreen(m.c, g.Name))
			return
		}
	}
	m.setFlash(fmt.Sprintf("no graph %q (tab completes)", name), true)
}

func (m *Model) graphs() *graphsScreen {
	s, _ := m.base().(*graphsScreen)
	return s
}

func (m *Model) rgd() *rgdScreen {
	s, _ := m.base().(*rgdScreen)
	return s
}

// listGraph shows the instance list filtered to one graph's instances,
// replacing any filter it had.
func (m *Model) listGraph(name string) tea.Cmd {
	for len(m.stack) > 1 {
		m.pop()
	}
	l := m.list()
	q := "graph:" + strings.ToLower(name)
	l.filter.SetValue(q)
	l.setQuery(q)
	m.setFlash("graph "+name+": "+plural(len(l.rows), "instance"), false)
	return nil
}

// graphsAction is the instance list's (and every screen's) key to the
// graphs screen. It has no help text yet: one more entry pushes the `?`
// help's rules off 100x30 until the help is laid out to fit (docs/keys.md
// documents it, and the graphs screens' footers show their keys).
func graphsAction() action {
	return action{name: "graphs", keys: []string{"D"}, help: "the graphs screen: every ResourceGraphDefinition, its state and instances (also :graphs, :rgd)", do: (*Model).showGraphs}
}

// graphsActions is the table of the graphs screen, in footer order.
func graphsActions() []action {
	scr := (*Model).graphs
	hasRow := func(m *Model) bool { return scr(m).selected() != nil }
	sortBy := func(k graphSort) func(m *Model) tea.Cmd {
		return func(m *Model) tea.Cmd {
			s := scr(m)
			s.setSort(k)
			dir := "ascending"
			if s.order.desc {
				dir = "descending"
			}
			m.setFlash("graphs sorted by "+k.String()+", "+dir, false)
			return nil
		}
	}
	move := func(d func(s *graphsScreen) int) func(m *Model) tea.Cmd {
		return func(m *Model) tea.Cmd { scr(m).move(d(scr(m))); return nil }
	}
	by := func(n int) func(*graphsScreen) int { return func(*graphsScreen) int { return n } }
	page := func(sign int) func(*graphsScreen) int {
		return func(s *graphsScreen) int { return sign * max(s.h-3, 1) }
	}
	return []action{
		{name: "open", keys: []string{"enter"}, help: "open the graph: layers, schema, status, YAML, Events", short: "open", when: hasRow,
			do: func(m *Model) tea.Cmd { m.push(newRGDScreen(m.c, scr(m).selected().Name)); return nil }},
		{name: "graphInstances", keys: []string{"i"}, help: "list the graph's instances", short: "instances", when: hasRow,
			do: func(m *Model) tea.Cmd { return m.listGraph(scr(m).selected().Name) }},
		{name: "filter", keys: []string{"/"}, help: "filter the graphs (text, state:inactive, scope:cluster)", short: "filter",
			do: func(m *Model) tea.Cmd {
				s := scr(m)
				s.filtering = true
				s.filter.SetValue(s.order.query)
				s.filter.CursorEnd()
				return s.filter.Focus()
			}},
		{name: "sort", keys: []string{"s"}, help: "sort by the next column", short: "sort",
			do: func(m *Model) tea.Cmd { return sortBy((scr(m).order.sortBy + 1) % numGraphSorts)(m) }},
		{name: "sortName", keys: []string{"N"}, help: "sort by name", do: sortBy(graphSortName)},
		{name: "sortState", keys: []string{"S"}, help: "sort by state, not served first", do: sortBy(graphSortState)},
		{name: "sortKind", keys: []string{"K"}, help: "sort by kind", do: sortBy(graphSortKind)},
		{name: "sortInstances", keys: []string{"I"}, help: "sort by instances, most first", do: sortBy(graphSortInstances)},
		{name: "up", keys: []string{"up", "k"}, help: "up", do: move(by(-1))},
		{name: "down", keys: []string{"down", "j"}, help: "down", do: move(by(1))},
		{name: "pageUp", keys: []string{"pgup", "ctrl+u"}, help: "page up", do: move(page(-1))},
		{name: "pageDown", keys: []string{"pgdown", "ctrl+f"}, help: "page down", do: move(page(1))},
		{name: "top", keys: []string{"home", "g"}, help: "top", do: move(by(-1 << 30))},
		{name: "bottom", keys: []string{"end", "G"}, help: "bottom", do: move(by(1 << 30))},
		{name: "back", keys: []string{"esc"}, help: "clear the filter, else back to the instances", short: "back",
			do: func(m *Model) tea.Cmd {
				if s := scr(m); s.order.query != "" {
					s.filter.SetValue("")
					s.setQuery("")
					return nil
				}
				m.pop()
				return nil
			}},
	}
}

// graphsFilterActions run while a graphs filter is typed.
func graphsFilterActions() []action {
	done := func(clear bool) func(m *Model) tea.Cmd {
		return func(m *Model) tea.Cmd {
			s := m.graphs()
			s.filtering = false
			s.filter.Blur()
			if clear {
				s.filter.SetValue("")
				s.setQuery("")
			}
			return nil
		}
	}
	return []action{
		{name: "confirm", keys: []string{"enter"}, help: "keep the filter", short: "keep", do: done(false)},
		{name: "back", keys: []string{"esc"}, help: "clear the filter", short: "clear", do: done(true)},
		{name: "forceQuit", keys: []string{"ctrl+c"}, help: "quit from anywhere", do: (*Model).quit},
	}
}

// rgdActions is the table of one graph's screen, in footer order.
func rgdActions() []action {
	scr := (*Model).rgd
	step := func(d int) func(m *Model) tea.Cmd {
		return func(m *Model) tea.Cmd { s := scr(m); s.setTab(s.tab + rgdTab(d)); return nil }
	}
	scroll := func(n int) func(m *Model) tea.Cmd {
		return func(m *Model) tea.Cmd { scr(m).scroll(n); return nil }
	}
	page := func(sign int) func(m *Model) tea.Cmd {
		return func(m *Model) tea.Cmd { s := scr(m); s.scroll(sign * max(s.h-3, 1)); return nil }
	}
	return []action{
		{name: "back", keys: []string{"esc"}, help: "back to the graphs", short: "back", do: func(m *Model) tea.Cmd { m.pop(); return nil }},
		{name: "nextView", keys: []string{"]", "tab"}, help: "next tab: graph, schema, status, YAML, Events", short: "view", do: step(1)},
		{name: "graphInstances", keys: []string{"i"}, help: "list the graph's instances", short: "instances",
			do: func(m *Model) tea.Cmd { return m.listGraph(scr(m).name) }},
		{name: "yaml", keys: []string{"y"}, help: "the definition's YAML", short: "yaml",
			do: func(m *Model) tea.Cmd { scr(m).setTab(rgdTabYAML); return nil }},
		{name: "prevView", keys: []string{"[", "shift+tab"}, help: "previous tab", do: step(-1)},
		{name: "up", keys: []string{"up", "k"}, help: "scroll up", do: scroll(-1)},
		{name: "down", keys: []string{"down", "j"}, help: "scroll down", do: scroll(1)},
		{name: "scrollUp", keys: []string{"K"}, help: "scroll up", do: scroll(-1)},
		{name: "scrollDown", keys: []string{"J"}, help: "scroll down", do: scroll(1)},
		{name: "pageUp", keys: []string{"pgup", "ctrl+u"}, help: "page up", do: page(-1)},
		{name: "pageDown", keys: []string{"pgdown", "ctrl+f"}, help: "page down", do: page(1)},
		{name: "top", keys: []string{"home", "g"}, help: "top", do: func(m *Model) tea.Cmd { scr(m).vp.GotoTop(); return nil }},
		{name: "bottom", keys: []string{"end", "G"}, help: "bottom", do: func(m *Model) tea.Cmd { scr(m).vp.GotoBottom(); return nil }},
	}
}
