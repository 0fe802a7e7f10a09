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
	screenDefaults
	c      *common
	acts   []action
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
	s := &instanceScreen{c: c, key: key, graph: &graphPane{c: c}, detail: newDetailPane(c), snap: &state.Snapshot{}}
	s.acts = s.actions()
	return s
}

func (s *instanceScreen) bindings() ([]action, bool) { return s.acts, true }
func (s *instanceScreen) shown() (node, text string) { return s.graph.nodeID, s.detail.vp.GetContent() }
func (s *instanceScreen) SetSize(w, h int)           { s.w, s.h = w, h }
func (s *instanceScreen) View() string               { return strings.Join(s.lines, "\n") }

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
	case instanceDetailMsg:
		s.detail.inst.take(msg)
	case tea.KeyPressMsg:
		s.c.explain(msg, "instance", s.acts)
	}
	return nil
}

// fetch asks the backend for the instance's object and Events while the
// Instance tab shows and what it shows is stale.
func (s *instanceScreen) fetch() tea.Cmd {
	if s.detail.tab != tabInstance {
		return nil
	}
	return s.detail.inst.fetch(s.c.b, s.instance(), s.c.now())
}

// spinning: a resource of the instance is in progress.
func (s *instanceScreen) spinning() bool {
	if in := s.instance(); in != nil {
		for i := range in.Resources {
			if in.Resources[i].Phase().Class() == state.ClassProgressing {
				return true
			}
		}
	}
	return false
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
	if why := unservedWhy(s.snap, in); why != "" {
		out += "  " + th.Warn.Render(why)
	} else if in.Message != "" {
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

// actions is the instance screen's, in footer order.
func (s *instanceScreen) actions() []action {
	graph := func(d int) func() tea.Cmd { return do0(func() { s.graph.move(d) }) }
	tab := func(t detailTab) func() tea.Cmd { return do0(func() { s.detail.setTab(t) }) }
	step := func(d int) func() tea.Cmd {
		return do0(func() { s.detail.setTab((s.detail.tab + detailTab(d) + numTabs) % numTabs) })
	}
	scroll := func(n int) func() tea.Cmd { return do0(func() { s.detail.scroll(n) }) }
	page := func(n int) func() tea.Cmd { return do0(func() { s.detail.page(n) }) }
	ops := targeting{c: s.c, in: s.instance, snap: func() *state.Snapshot { return s.snap }}
	return present(s.instance, offer(
		share("back", "back to the instances", "back", do0(s.c.host.pop)),
		share("nextView", "next detail view", "view", step(1)),
		share("yaml", "YAML: desired, observed, diff", "yaml", do0(s.yaml)),
		share("timeline", "rollout timeline", "timeline", tab(tabTimeline)),
		share("nextError", "next resource in error", "error", do0(s.nextError)),
		ops.requeueAction(),
		ops.deleteAction(),
		share("history", "state history", "history", tab(tabHistory)),
		ops.editAction("edit"),
		share("up", "previous node", "", graph(-1)),
		share("down", "next node", "", graph(1)),
		action{name: "firstNode", keys: []string{"home"}, help: "first node", do: graph(-1 << 30)},
		action{name: "layers", keys: []string{"g"}, help: "graph: layer by layer (every dependency named) or as a tree", short: "layers", do: do0(s.toggleLayers)},
		share("bottom", "last node", "", graph(1<<30)),
		share("scrollUp", "scroll the detail up", "", scroll(-1)),
		share("scrollDown", "scroll the detail down", "", scroll(1)),
		share("pageUp", "page the detail up", "", page(-1)),
		share("pageDown", "page the detail down", "", page(1)),
		action{name: "detailTop", keys: []string{"<"}, help: "the detail's top: the oldest log line", do: do0(func() { s.detail.toEnd(false) })},
		action{name: "detailEnd", keys: []string{">"}, help: "the detail's end: the newest log line (Logs follow from there)", do: do0(func() { s.detail.toEnd(true) })},
		share("open", "inspect the node", "", tab(tabInspect)),
		share("prevView", "previous detail view", "", step(-1)),
		share("logs", "the instance's log lines", "", tab(tabLogs)),
		action{name: "reveal", keys: []string{"x"}, help: "reveal a Secret's data (asks)", do: s.askReveal},
		share("instance", "describe the instance: spec, status, conditions, Events, children (y: its YAML)", "instance", tab(tabInstance)),
		share("instanceLogs", "the instance's log lines (as L)", "", tab(tabLogs)),
	))
}

// present offers acts, but back, only while the instance exists: the
// footer of a deleted instance offered keys that had nothing to act on.
func present(in func() *state.Instance, acts []action) []action {
	for i := range acts {
		if a := &acts[i]; a.name != "back" && a.when == nil {
			a.when = func() bool { return in() != nil }
		}
	}
	return acts
}

// yaml shows the YAML tab, and again the next of its modes; on the
// Instance tab, the instance's own YAML.
func (s *instanceScreen) yaml() {
	p := s.detail
	if p.tab == tabInstance {
		p.inst.yaml = !p.inst.yaml
		return
	}
	if p.tab == tabYAML {
		p.ymode = (p.ymode + 1) % numYAMLModes
	}
	p.setTab(tabYAML)
}

func (s *instanceScreen) toggleLayers() {
	s.graph.layered = !s.graph.layered
	if in := s.instance(); in != nil {
		s.graph.layout(in)
	}
}

// nextError selects the next resource in error and shows its error.
func (s *instanceScreen) nextError() {
	h, in := s.c.host, s.instance()
	if in != nil && len(s.graph.tree.order) > 0 {
		if i := failedAt(in, s.graph.tree.order, s.graph.node+1); i >= 0 {
			s.graph.select1(i)
			s.detail.setTab(tabInspect)
			h.flash("error in "+s.graph.nodeID, true)
			return
		}
	}
	if in != nil && in.Phase().Class() == state.ClassFailed && (in.LastError == nil || in.LastError.Resource == "") {
		h.flash("instance error: "+in.Message, true)
		return
	}
	if in != nil && in.LastError != nil {
		if j := s.graph.indexOf(in.LastError.Resource); j >= 0 {
			s.graph.select1(j)
			s.detail.setTab(tabInspect)
		}
		h.flash(errorFlash(in, s.c.now()), true)
		return
	}
	h.flash("no resource in error", false)
}

// askReveal asks before showing a Secret's data; again hides it.
func (s *instanceScreen) askReveal() tea.Cmd {
	h, r := s.c.host, s.resource()
	if r == nil || !isSecret(r) {
		h.flash("select a Secret to reveal its data", true)
		return nil
	}
	k := revealKey{s.key, r.ID}
	if s.detail.revealed[k] {
		delete(s.detail.revealed, k)
		h.flash("secret data hidden", false)
		return nil
	}
	h.push(newDialog(s.c, fmt.Sprintf("Reveal the data of Secret %s?", r.ID), []string{"Its values will be shown in clear on this screen."}, "Reveal",
		func() tea.Cmd {
			s.detail.revealed[k] = true
			h.flash("secret data revealed ("+s.c.keys.label("reveal")+" hides it)", false)
			return nil
		}))
	return nil
}
