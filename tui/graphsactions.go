package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/kroscope/kroscope/engine/state"
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

// isGraphs matches the graphs screen on the stack, which :graphs and D
// bring to the front (its filter and cursor kept).
func isGraphs(s screen) bool { _, ok := s.(*graphsScreen); return ok }

// openGraph opens the graph named name (case-insensitively; its kind
// names it too), or says there is none.
func openGraph(c *common, snap *state.Snapshot, name string) {
	for _, g := range snap.Graphs {
		if strings.EqualFold(g.Name, name) || (g.Kind != "" && strings.EqualFold(g.Kind, name)) {
			c.host.push(newRGDScreen(c, g.Name))
			return
		}
	}
	c.host.flash(fmt.Sprintf("no graph %q (tab completes)", name), true)
}

// listGraph shows the instance list filtered to one graph's instances,
// replacing any filter it had.
func listGraph(c *common, name string) tea.Cmd {
	c.host.toList(graphListMsg{name})
	return nil
}

// graphListMsg asks the list for one graph's instances.
type graphListMsg struct{ name string }

// graphsActions is the graphs screen's, in footer order.
func (s *graphsScreen) actions() []action {
	hasRow := func() bool { return s.selected() != nil }
	sortBy := func(k graphSort) func() tea.Cmd {
		return do0(func() { s.sortFlash(k) })
	}
	move := func(d func() int) func() tea.Cmd { return do0(func() { s.move(d()) }) }
	by := func(n int) func() int { return func() int { return n } }
	page := func(sign int) func() int { return func() int { return sign * max(s.h-3, 1) } }
	open := share("open", "open the graph: layers, schema, status, YAML, Events", "open",
		do0(func() { s.c.host.push(newRGDScreen(s.c, s.selected().Name)) }))
	open.when = hasRow
	inst := share("graphInstances", "list the graph's instances", "instances", func() tea.Cmd { return listGraph(s.c, s.selected().Name) })
	inst.when = hasRow
	return offer(
		open, inst,
		share("filter", "filter the graphs (text, state:inactive, scope:cluster)", "filter", s.startFilter),
		share("sort", "sort by the next column", "sort", func() tea.Cmd { return sortBy((s.order.sortBy + 1) % numGraphSorts)() }),
		share("sortName", "sort by name", "", sortBy(graphSortName)),
		share("sortState", "sort by state, not served first", "", sortBy(graphSortState)),
		share("sortKind", "sort by kind", "", sortBy(graphSortKind)),
		action{name: "sortInstances", keys: []string{"I"}, help: "sort by instances, most first", do: sortBy(graphSortInstances)},
		share("up", "up", "", move(by(-1))),
		share("down", "down", "", move(by(1))),
		share("pageUp", "page up", "", move(page(-1))),
		share("pageDown", "page down", "", move(page(1))),
		share("top", "top", "", move(by(-1<<30))),
		share("bottom", "bottom", "", move(by(1<<30))),
		share("back", "clear the filter, else back to the instances", "back", do0(s.back)),
	)
}

// sortFlash sorts by k and says how.
func (s *graphsScreen) sortFlash(k graphSort) {
	s.setSort(k)
	dir := "ascending"
	if s.order.desc {
		dir = "descending"
	}
	s.c.host.flash("graphs sorted by "+k.String()+", "+dir, false)
}

func (s *graphsScreen) startFilter() tea.Cmd {
	s.filtering = true
	s.filter.SetValue(s.order.query)
	s.filter.CursorEnd()
	return s.filter.Focus()
}

func (s *graphsScreen) back() {
	if s.order.query != "" {
		s.filter.SetValue("")
		s.setQuery("")
		return
	}
	s.c.host.pop()
}

// filterActions run while a graphs filter is typed.
func (s *graphsScreen) filterActions() []action {
	done := func(clear bool) func() tea.Cmd {
		return do0(func() {
			s.filtering = false
			s.filter.Blur()
			if clear {
				s.filter.SetValue("")
				s.setQuery("")
			}
		})
	}
	return offer(
		share("confirm", "keep the filter", "keep", done(false)),
		share("back", "clear the filter", "clear", done(true)),
	)
}

// actions is one graph's screen's, in footer order.
func (s *rgdScreen) actions() []action {
	step := func(d int) func() tea.Cmd { return do0(func() { s.setTab(s.tab + rgdTab(d)) }) }
	scroll := func(n int) func() tea.Cmd { return do0(func() { s.scroll(n) }) }
	page := func(sign int) func() tea.Cmd { return do0(func() { s.scroll(sign * max(s.h-3, 1)) }) }
	return offer(
		share("back", "back to the graphs", "back", do0(s.c.host.pop)),
		share("nextView", "next tab: graph, schema, status, YAML, Events", "view", step(1)),
		share("graphInstances", "list the graph's instances", "instances", func() tea.Cmd { return listGraph(s.c, s.name) }),
		share("yaml", "the definition's YAML", "yaml", do0(func() { s.setTab(rgdTabYAML) })),
		share("prevView", "previous tab", "", step(-1)),
		share("up", "scroll up", "", scroll(-1)),
		share("down", "scroll down", "", scroll(1)),
		share("scrollUp", "scroll up", "", scroll(-1)),
		share("scrollDown", "scroll down", "", scroll(1)),
		share("pageUp", "page up", "", page(-1)),
		share("pageDown", "page down", "", page(1)),
		share("top", "top", "", do0(func() { s.vp.GotoTop() })),
		share("bottom", "bottom", "", do0(func() { s.vp.GotoBottom() })),
	)
}
