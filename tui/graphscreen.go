package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler/graph/graphview"
	"github.com/kroscope/kroscope/theme"
)

// graphScreen is one graph (enter on the graphs screen): a header, tabs for
// the template graph in layers, the schema summary, the status and
// conditions, the definition's YAML and its Events; i lists its instances.
type graphScreen struct {
	screenDefaults
	c      *common
	acts   []action
	snap   *state.Snapshot
	name   string
	tab    rgdTab
	vp     viewport.Model
	events rgdEvents

	w, h    int
	content rgdKey // what the viewport holds
	lines   []string
}

type rgdTab int

const (
	rgdTabGraph rgdTab = iota
	rgdTabSchema
	rgdTabStatus
	rgdTabYAML
	rgdTabEvents
	numRGDTabs
)

func (t rgdTab) String() string {
	return [...]string{"Graph", "Schema", "Status", "YAML", "Events"}[t]
}

// view names the tab for Views.
func (t rgdTab) view() string { return "rgd/" + strings.ToLower(t.String()) }

// rgdKey is everything the viewport's text depends on.
type rgdKey struct {
	name    string
	version uint64
	tab     rgdTab
	w       int
	th      *theme.Theme
	events  time.Time // when the Events shown were read
	now     int64     // seconds: the Events' ages
}

func newGraphScreen(c *common, name string) *graphScreen {
	vp := viewport.New()
	vp.KeyMap = viewport.KeyMap{} // keys go through the action tables
	s := &graphScreen{c: c, name: name, vp: vp, snap: &state.Snapshot{}}
	s.acts = s.actions()
	return s
}

func (s *graphScreen) bindings() ([]action, bool) { return s.acts, true }
func (s *graphScreen) scope() (viewScope, bool)   { return viewScope{}, true }
func (s *graphScreen) shown() (node, text string) { return "", s.vp.GetContent() }
func (s *graphScreen) views() []string            { return []string{s.tab.view()} }
func (s *graphScreen) View() string               { return strings.Join(s.lines, "\n") }

func (s *graphScreen) SetSize(w, h int) {
	s.w, s.h = w, h
	s.vp.SetWidth(w)
	s.vp.SetHeight(max(h-2, 1))
}

// graph is the graph shown, or nil once it is gone.
func (s *graphScreen) graph() *state.Graph {
	for i := range s.snap.Graphs {
		if s.snap.Graphs[i].Name == s.name {
			return &s.snap.Graphs[i]
		}
	}
	return nil
}

func (s *graphScreen) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case snapMsg:
		s.snap = msg.snap
	case rgdEventsMsg:
		s.events.take(msg)
	case tea.KeyPressMsg:
		s.c.explain(msg, "graph", s.acts)
	case tea.MouseClickMsg:
		if msg.Button == tea.MouseLeft && msg.Y == 1 {
			s.clickTab(msg.X)
		}
	case tea.MouseWheelMsg:
		if msg.Button == tea.MouseWheelUp {
			s.vp.ScrollUp(3)
		} else if msg.Button == tea.MouseWheelDown {
			s.vp.ScrollDown(3)
		}
	}
	return nil
}

func (s *graphScreen) setTab(t rgdTab) { s.tab = (t + numRGDTabs) % numRGDTabs }

func (s *graphScreen) clickTab(x int) {
	sepW := ansi.StringWidth(" " + s.c.th.G.Sep + " ")
	pos := 0
	for t := rgdTab(0); t < numRGDTabs; t++ {
		if w := ansi.StringWidth(s.c.th.Choice(t.String(), t == s.tab, s.c.th.Selected, s.c.th.Dim)); x >= pos && x < pos+w {
			s.tab = t
			return
		} else {
			pos += w + sepW
		}
	}
}

func (s *graphScreen) scroll(n int) {
	if n < 0 {
		s.vp.ScrollUp(-n)
	} else {
		s.vp.ScrollDown(n)
	}
}

// prepare sets the viewport's text when what it shows changed, and draws
// the header, the tabs and the viewport.
func (s *graphScreen) prepare() {
	th := s.c.th
	g := s.graph()
	if g == nil {
		s.lines = append([]string{th.Warn.Render(fit("graph "+s.name+" is gone (esc goes back)", s.w, th.G.Ellipsis))}, block(nil, s.w, max(s.h-1, 1), "")...)
		return
	}
	k := rgdKey{name: s.name, version: s.snap.Version, tab: s.tab, w: s.w, th: th}
	if s.tab == rgdTabEvents {
		k.events, k.now = s.events.at, s.c.now().Unix()
	}
	if k != s.content || s.lines == nil {
		off := s.vp.YOffset()
		s.vp.SetContentLines(s.text(g))
		if k.tab == s.content.tab && k.name == s.content.name {
			s.vp.SetYOffset(off)
		} else {
			s.vp.GotoTop()
		}
		s.content = k
	}
	out := []string{clip(s.header(g), s.w, th.G.Ellipsis), s.tabBar()}
	out = append(out, withMoreBelow(&s.vp, th, s.w)...)
	s.lines = block(out, s.w, s.h, th.G.Ellipsis)
}

// header: name, state and instances first (a narrow terminal cuts the
// rest), then kind, group/version and scope.
func (s *graphScreen) header(g *state.Graph) string {
	th := s.c.th
	r := newGraphRow(g)
	return th.Bold.Render(g.Name) + "  " + th.ClassStyle(r.class).Render(th.ClassGlyph(r.class, 0)+" "+r.st) +
		"  " + plural(g.Status.Total, "instance") + th.Dim.Render("  "+r.kind+"  "+r.gv+"  "+r.scope)
}

func (s *graphScreen) tabBar() string {
	th := s.c.th
	parts := make([]string, 0, numRGDTabs)
	for t := rgdTab(0); t < numRGDTabs; t++ {
		parts = append(parts, th.Choice(t.String(), t == s.tab, th.Selected, th.Dim))
	}
	return fit(strings.Join(parts, th.Dim.Render(" "+th.G.Sep+" ")), s.w, th.G.Ellipsis)
}

// text is the current tab's content.
func (s *graphScreen) text(g *state.Graph) []string {
	th, w := s.c.th, s.w
	switch s.tab {
	case rgdTabSchema:
		return schemaView(th, g.Template, w)
	case rgdTabStatus:
		return rgdStatusView(th, g, w)
	case rgdTabYAML:
		if g.Definition == nil || g.Definition.YAML == "" {
			return []string{th.Dim.Render("(the definition could not be read)")}
		}
		return cutLines(strings.Split(strings.TrimRight(g.Definition.YAML, "\n"), "\n"), w, th.G.Ellipsis)
	case rgdTabEvents:
		return s.events.view(th, s.name, w, s.c.now())
	}
	return layersView(th, g, w)
}

// cutLines cuts each line to w cells, with the ellipsis where it cuts.
func cutLines(ls []string, w int, el string) []string {
	for i, l := range ls {
		ls[i] = clip(l, w, el)
	}
	return ls
}

// layersView is the template graph layer by layer: each resource's id,
// kind and dependencies, and its marks (external, forEach, includeWhen,
// readyWhen) wrapped under it.
func layersView(th *theme.Theme, g *state.Graph, w int) []string {
	t := g.Template
	if t == nil {
		return []string{th.Dim.Render("(the graph is not built: see Status)")}
	}
	nodes := map[string]graphview.Node{}
	idW, kindW := 4, 4
	for _, n := range t.Resources {
		nodes[n.ID] = n
		idW, kindW = max(idW, len(n.ID)), max(kindW, len(n.Kind)+1)
	}
	idW, kindW = min(idW, max(w/4, 8)), min(kindW, max(w/4, 8))
	var out []string
	for i, layer := range t.Layers {
		out = append(out, th.Header.Render(fit(fmt.Sprintf("LAYER %d", i), w, "")))
		for _, id := range layer {
			out = append(out, layerNode(th, nodes[id], w, idW, kindW)...)
		}
	}
	return out
}

// layerNode is one resource of a layer.
func layerNode(th *theme.Theme, n graphview.Node, w, idW, kindW int) []string {
	el := th.G.Ellipsis
	kind := n.Kind
	if n.External {
		kind += "*"
	}
	deps := th.Dim.Render("(no dependencies)")
	if len(n.Dependencies) > 0 {
		deps = "← " + strings.Join(n.Dependencies, ", ")
	}
	out := []string{clip("  "+th.Bold.Render(fit(n.ID, idW, el))+"  "+fit(kind, kindW, el)+"  "+deps, w, el)}
	// Marks sit under the kind; a narrow terminal gives the expression
	// the room instead, its continuation lines under the mark's label.
	indent := strings.Repeat(" ", min(2+idW+2, max(w/8, 4)))
	mark := func(label, text string) {
		hang := len(label) + 1
		if w < 100 {
			hang = 2
		}
		for i, l := range wrap(label+" "+text, max(w-len(indent), 8)) {
			if i == 0 {
				l = th.Label.Render(label) + strings.TrimPrefix(l, label)
			} else {
				l = strings.Repeat(" ", hang) + l
			}
			out = append(out, indent+l)
		}
	}
	switch {
	case n.ExternalCollection:
		mark("external", "collection by label selector: read, never written")
	case n.External:
		mark("external", "read, never written")
	}
	for _, f := range n.ForEach {
		mark("forEach", f.Name+" in "+f.Expression)
	}
	for _, e := range n.IncludeWhen {
		mark("includeWhen", e)
	}
	for _, e := range n.ReadyWhen {
		mark("readyWhen", e)
	}
	return out
}

// schemaView is the SimpleSchema summary: spec fields with their types,
// defaults and markers; status fields with their expressions.
func schemaView(th *theme.Theme, t *graphview.Summary, w int) []string {
	if t == nil {
		return []string{th.Dim.Render("(the graph is not built: see Status)")}
	}
	el := th.G.Ellipsis
	out := []string{th.Header.Render(fit("SPEC", w, ""))}
	if len(t.Schema.Spec) == 0 {
		out = append(out, th.Dim.Render("  (no fields)"))
	}
	pw, tw := len("FIELD"), len("TYPE")
	for _, f := range t.Schema.Spec {
		pw, tw = max(pw, len(f.Path)), max(tw, len(f.Type))
	}
	for _, f := range t.Schema.Status {
		pw, tw = max(pw, len(f.Path)), max(tw, len(f.Type))
	}
	pw, tw = min(pw, max(w/3, 10)), min(tw, max(w/5, 8))
	row := func(path, typ, rest string) string {
		return clip("  "+fit(path, pw, el)+"  "+fit(typ, tw, el)+"  "+rest, w, el)
	}
	if len(t.Schema.Spec) > 0 {
		out = append(out, th.Dim.Render(row("FIELD", "TYPE", "DEFAULT, MARKERS")))
	}
	for _, f := range t.Schema.Spec {
		out = append(out, row(f.Path, f.Type, strings.Join(graphview.SpecMarks(f), "  ")))
		if f.Description != "" {
			out = append(out, th.Dim.Render(clip("  "+strings.Repeat(" ", pw+2)+f.Description, w, el)))
		}
	}
	out = append(out, "", th.Header.Render(fit("STATUS", w, "")))
	if len(t.Schema.Status) == 0 {
		return append(out, th.Dim.Render("  (no fields)"))
	}
	out = append(out, th.Dim.Render(row("FIELD", "TYPE", "EXPRESSION")))
	for _, f := range t.Schema.Status {
		out = append(out, row(f.Path, orDash(f.Type), f.Expression))
	}
	return out
}

// rgdStatusView is the graph's state, why it is not served, where it
// comes from, its instances by state and its conditions.
func rgdStatusView(th *theme.Theme, g *state.Graph, w int) []string {
	var out []string
	row := func(label, value string) {
		if value == "" {
			return
		}
		for i, l := range wrap(value, max(w-14, 8)) {
			if i == 0 {
				out = append(out, th.Label.Render(fit(label, 14, ""))+l)
			} else {
				out = append(out, strings.Repeat(" ", 14)+l)
			}
		}
	}
	st := g.Status
	r := newGraphRow(g)
	row("State", th.ClassStyle(r.class).Render(th.ClassGlyph(r.class, 0)+" "+r.st)+th.Dim.Render("  ("+st.By+"'s view)"))
	row("Not served", st.Reason)
	row("Note", g.Note)
	if g.Kro != nil {
		row("kro", g.Kro.Summary())
	}
	row("Kind", strings.TrimSpace(g.Kind+"  "+g.APIVersion))
	row("Resource", g.Resource)
	row("Scope", st.Scope)
	row("Source", g.Source)
	counts := []string{fmt.Sprint(st.Total)}
	for _, ph := range sortedPhases(st.Instances) {
		counts = append(counts, fmt.Sprintf("%d %s", st.Instances[ph], state.Phase(ph).Word()))
	}
	row("Instances", strings.Join(counts, ", "))
	out = append(out, "", th.Header.Render(fit("CONDITIONS ("+st.By+")", w, "")))
	return append(out, conditionsTable(th, st.Conditions, w)...)
}

// sortedPhases orders the instance states worst first, then by name.
func sortedPhases(m map[string]int) []string {
	var out []string
	for _, c := range instanceClasses {
		var same []string
		for ph := range m {
			if state.Phase(ph).Class() == c {
				same = append(same, ph)
			}
		}
		slices.Sort(same)
		out = append(out, same...)
	}
	return out
}

// GraphReader is what the Events tab asks of a backend that can list an
// RGD's Events (the engine does); without it the tab says so.
type GraphReader interface {
	GraphEvents(ctx context.Context, name string) ([]state.Event, error)
}

// graphEventsRefresh is how often the Events tab re-reads while on screen.
const graphEventsRefresh = 5 * time.Second

// rgdEvents is the Events tab's state: the last read and whether one is
// in flight.
type rgdEvents struct {
	name     string
	events   []state.Event
	err      string
	at       time.Time // when the shown read ended
	fetching bool
	asked    time.Time
}

type rgdEventsMsg struct {
	name   string
	events []state.Event
	err    error
	at     time.Time
}

// fetch returns the read to run when the Events tab is on screen and
// what it shows is stale; a read lost on the way (its reply went to
// another screen) is asked again after the refresh interval.
func (d *rgdEvents) fetch(b Backend, name string, now time.Time) tea.Cmd {
	r, ok := b.(GraphReader)
	if !ok {
		if d.name != name {
			*d = rgdEvents{name: name, err: "this backend lists no Events", at: now}
		}
		return nil
	}
	if d.name == name && now.Sub(d.asked) < graphEventsRefresh {
		return nil
	}
	if d.name != name {
		*d = rgdEvents{name: name}
	}
	d.fetching, d.asked = true, now
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		evs, err := inert(r.GraphEvents(ctx, name))
		return rgdEventsMsg{name: name, events: evs, err: err, at: time.Now()}
	}
}

func (d *rgdEvents) take(msg rgdEventsMsg) {
	if msg.name != d.name {
		return
	}
	d.fetching, d.at = false, msg.at
	d.events, d.err = msg.events, ""
	if msg.err != nil {
		d.events, d.err = nil, msg.err.Error()
	}
}

func (d *rgdEvents) view(th *theme.Theme, name string, w int, now time.Time) []string {
	if d.name != name || d.at.IsZero() {
		return []string{th.Dim.Render("(Events: reading" + th.G.Ellipsis + ")")}
	}
	out := []string{th.Header.Render(fit("EVENTS (newest first)", w, ""))}
	return append(out, eventsTable(th, &state.InstanceDetail{Events: d.events, EventsErr: d.err}, w, now)...)
}

// fetch asks the backend for the graph's Events while its Events tab
// shows.
func (s *graphScreen) fetch() tea.Cmd {
	if s.tab != rgdTabEvents {
		return nil
	}
	return s.events.fetch(s.c.b, s.name, s.c.now())
}

// openGraph opens the graph named name (case-insensitively; its kind
// names it too), or says there is none.
func openGraph(c *common, snap *state.Snapshot, name string) {
	for _, g := range snap.Graphs {
		if strings.EqualFold(g.Name, name) || (g.Kind != "" && strings.EqualFold(g.Kind, name)) {
			c.host.push(newGraphScreen(c, g.Name))
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

// actions is one graph's screen's, in footer order.
func (s *graphScreen) actions() []action {
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
