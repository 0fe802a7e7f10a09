package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/kroscope/kroscope/engine/state"
)

// instanceScreen is one instance: a header, the graph and the detail pane,
// side by side when wide enough, else the graph above the detail. j/k
// always move the graph's cursor; the detail scrolls with J/K and the page
// keys; esc goes back to the list.
type instanceScreen struct {
	c      *common
	snap   *state.Snapshot
	key    state.InstanceKey
	graph  *graphPane
	detail *detailPane

	w, h int
	// Layout, computed in prepare: where each pane starts (for clicks).
	side           bool
	graphW, graphH int
	header         string
	lines          []string
}

func newInstanceScreen(c *common, key state.InstanceKey) *instanceScreen {
	return &instanceScreen{c: c, key: key, graph: &graphPane{c: c}, detail: newDetailPane(c), snap: &state.Snapshot{}}
}

func (s *instanceScreen) pane() pane       { return paneInstance }
func (s *instanceScreen) overlay() bool    { return false }
func (s *instanceScreen) SetSize(w, h int) { s.w, s.h = w, h }
func (s *instanceScreen) View() string     { return strings.Join(s.lines, "\n") }

func (s *instanceScreen) instance() *state.Instance { return s.snap.Instance(s.key) }

// resource is the resource under the graph's cursor, or nil.
func (s *instanceScreen) resource() *state.Resource {
	if in := s.instance(); in != nil {
		return in.Resource(s.graph.nodeID)
	}
	return nil
}

func (s *instanceScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case snapMsg:
		s.snap = msg.snap
		if in := s.instance(); in != nil {
			s.graph.layout(in)
		}
	case tea.MouseClickMsg:
		if msg.Y < 1 {
			return nil
		}
		msg.Y-- // below the header
		if s.side {
			if msg.X < s.graphW {
				return s.graph.Update(msg)
			}
			msg.X -= s.graphW + 1
			return s.detail.Update(msg)
		}
		if msg.Y < s.graphH {
			return s.graph.Update(msg)
		}
		msg.Y -= s.graphH
		return s.detail.Update(msg)
	case tea.MouseWheelMsg:
		if msg.Button == tea.MouseWheelUp {
			s.detail.scroll(-3)
		} else if msg.Button == tea.MouseWheelDown {
			s.detail.scroll(3)
		}
	}
	return nil
}

// prepare lays the panes out and lets each draw.
func (s *instanceScreen) prepare() {
	in := s.instance()
	th := s.c.th
	bodyH := max(s.h-1, 1)
	if in == nil {
		s.header = th.Warn.Render(fit(name(&state.Instance{Key: s.key})+" is gone (esc goes back)", s.w, th.G.Ellipsis))
		s.lines = append([]string{s.header}, block(nil, s.w, bodyH, "")...)
		return
	}
	s.graph.layout(in)
	s.side = s.w >= sideBySide
	if s.side {
		// The graph takes two fifths, or what its rows need up to what
		// leaves the detail 100 columns when the detail wraps its text
		// (Inspect, Instance): no reason cut beside an empty detail. The
		// other tabs' lines (logs, YAML) are cut at the pane's edge and
		// keep their three fifths.
		most := s.w * 2 / 5
		if t := s.detail.tab; t == tabInspect || t == tabInstance {
			most = max(most, s.w-detailWant)
		}
		s.graphW = clamp(s.graph.natural(in), s.w*2/5, most)
		s.graphH = bodyH
		s.graph.SetSize(s.graphW, bodyH)
		s.detail.SetSize(s.w-s.graphW-1, bodyH)
	} else {
		s.graphW = s.w
		s.graphH = clamp(len(s.graph.tree.order)+1, 3, max(bodyH*2/5, 3))
		s.graph.SetSize(s.w, s.graphH)
		s.detail.SetSize(s.w, max(bodyH-s.graphH, 1))
	}
	s.graph.prepare(in)
	s.detail.prepare(in, s.graph.nodeID, s.snap.Logs)
	s.header = clip(s.crumb(in), s.w, th.G.Ellipsis)
	lines := make([]string, 0, s.h)
	lines = append(lines, s.header)
	if s.side {
		sep := th.Dim.Render(th.G.Sep)
		for i := range bodyH {
			lines = append(lines, s.graph.lines[i]+sep+s.detail.lines[i])
		}
	} else {
		lines = append(lines, s.graph.lines...)
		lines = append(lines, s.detail.lines...)
	}
	s.lines = lines
}

// sideBySide is the narrowest screen with the graph beside the detail:
// narrower, each would get under 60 columns and cut its lines.
const sideBySide = 120

// detailWant is the detail's width once the screen is wide enough.
const detailWant = 100

// crumb is the header: kind, name, state, progress.
func (s *instanceScreen) crumb(in *state.Instance) string {
	th := s.c.th
	ready, total := in.ReadyCount()
	out := th.Bold.Render(in.Kind+" "+name(in)) + "  " + th.State(in.State, in.Phase().Word(), s.c.frame) +
		fmt.Sprintf("  %d/%d ready", ready, total) + th.Dim.Render(fmt.Sprintf("  graph %s  gen %d/%d  reconciles %d", in.Graph, in.ObservedGeneration, in.Generation, in.Reconciles))
	if in.Message != "" {
		out += "  " + th.Style(in.State).Render(strings.ReplaceAll(in.Message, "\n", " "))
	}
	for _, g := range s.snap.Graphs {
		if g.Name == in.Graph && g.Kro != nil { // kro's own view of the graph, while kro serves it
			out += th.Dim.Render("  " + g.Kro.Summary())
		}
		if g.Name == in.Graph && g.Note != "" { // what serving it skipped
			out += th.Dim.Render("  " + g.Note)
		}
	}
	return out
}

// instanceActions is the table of the instance screen, in footer order.
func instanceActions() []action {
	scr := func(m *Model) *instanceScreen { return m.detail() }
	graph := func(d int) func(m *Model) tea.Cmd {
		return func(m *Model) tea.Cmd { scr(m).graph.move(d); return nil }
	}
	tab := func(t detailTab) func(m *Model) tea.Cmd {
		return func(m *Model) tea.Cmd { scr(m).detail.setTab(t); return nil }
	}
	step := func(d int) func(m *Model) tea.Cmd {
		return func(m *Model) tea.Cmd {
			p := scr(m).detail
			p.setTab((p.tab + detailTab(d) + numTabs) % numTabs)
			return nil
		}
	}
	scroll := func(n int) func(m *Model) tea.Cmd {
		return func(m *Model) tea.Cmd { scr(m).detail.scroll(n); return nil }
	}
	page := func(n int) func(m *Model) tea.Cmd {
		return func(m *Model) tea.Cmd { scr(m).detail.page(n); return nil }
	}
	return []action{
		{name: "back", keys: []string{"esc"}, help: "back to the instances", short: "back", do: func(m *Model) tea.Cmd { m.pop(); return nil }},
		{name: "nextView", keys: []string{"]", "tab"}, help: "next detail view", short: "view", do: step(1)},
		{name: "yaml", keys: []string{"y"}, help: "YAML: desired, observed, diff", short: "yaml",
			do: func(m *Model) tea.Cmd {
				p := scr(m).detail
				if p.tab == tabInstance { // the instance's own YAML
					p.inst.yaml = !p.inst.yaml
					return nil
				}
				if p.tab == tabYAML {
					p.ymode = (p.ymode + 1) % numYAMLModes
				}
				p.setTab(tabYAML)
				return nil
			}},
		{name: "timeline", keys: []string{"t"}, help: "rollout timeline", short: "timeline", do: tab(tabTimeline)},
		{name: "nextError", keys: []string{"e"}, help: "next resource in error", short: "error", do: (*Model).nextError},
		{name: "requeue", keys: []string{"r"}, help: "requeue (skips the backoff)", short: "requeue", when: hasTarget, denied: mayNotRequeue, do: (*Model).requeue},
		{name: "delete", keys: []string{"ctrl+d"}, help: "delete (asks, lists what goes)", short: "delete", when: deletable, denied: mayNotDelete, do: (*Model).askDelete},
		{name: "history", keys: []string{"H"}, help: "state history", short: "history", do: tab(tabHistory)},
		{name: "edit", keys: []string{"E"}, help: "edit the instance's spec in $EDITOR (applied as kroscope; refused in --observe)", short: "edit", when: deletable, denied: mayNotEdit, do: (*Model).startEdit},
		{name: "up", keys: []string{"up", "k"}, help: "previous node", do: graph(-1)},
		{name: "down", keys: []string{"down", "j"}, help: "next node", do: graph(1)},
		{name: "firstNode", keys: []string{"home"}, help: "first node", do: graph(-1 << 30)},
		{name: "layers", keys: []string{"g"}, help: "graph: layer by layer (every dependency named) or as a tree", short: "layers",
			do: func(m *Model) tea.Cmd {
				g := scr(m).graph
				g.layered = !g.layered
				if in := scr(m).instance(); in != nil {
					g.layout(in)
				}
				return nil
			}},
		{name: "bottom", keys: []string{"end", "G"}, help: "last node", do: graph(1 << 30)},
		{name: "scrollUp", keys: []string{"K"}, help: "scroll the detail up", do: scroll(-1)},
		{name: "scrollDown", keys: []string{"J"}, help: "scroll the detail down", do: scroll(1)},
		{name: "pageUp", keys: []string{"pgup", "ctrl+u"}, help: "page the detail up", do: page(-1)},
		{name: "pageDown", keys: []string{"pgdown", "ctrl+f"}, help: "page the detail down", do: page(1)},
		{name: "open", keys: []string{"enter"}, help: "inspect the node", do: tab(tabInspect)},
		{name: "prevView", keys: []string{"[", "shift+tab"}, help: "previous detail view", do: step(-1)},
		{name: "logs", keys: []string{"L"}, help: "the instance's log lines", do: tab(tabLogs)},
		{name: "reveal", keys: []string{"x"}, help: "reveal a Secret's data (asks)", do: (*Model).askReveal},
		{name: "instance", keys: []string{"i", "d"}, help: "describe the instance: spec, status, conditions, Events, children (y: its YAML)", short: "instance", do: tab(tabInstance)},
		{name: "instanceLogs", keys: []string{"l"}, help: "the instance's log lines (as L)", do: tab(tabLogs)},
	}
}
