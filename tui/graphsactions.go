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

// actions is the graphs screen's, in footer order.
func (s *graphsScreen) actions() []action {
	hasRow := func() bool { return s.selected() != nil }
	open := share("open", "open the graph: layers, schema, status, YAML, Events", "open",
		do0(func() { s.c.host.push(newRGDScreen(s.c, s.selected().Name)) }))
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
