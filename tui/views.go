package tui

import "strings"

// The views are the one list of what the TUI can show once the engine
// runs: each screen names the views it draws (screen.views), and Views
// derives the list from the same tabs, YAML modes and graph layouts the
// screens use, so a new tab or mode is in it with no edit here. Tests
// render every view (test/e2e's secret-leak test fails on one it does not
// reach). The startup and fatal screens come before the engine runs and
// are not views.

// View is one thing a screen can show.
type View struct {
	Name string
	// PerNode: what it shows depends on the node selected in the graph.
	PerNode bool
}

const (
	viewInstances = "instances"
	viewHelp      = "help"
	viewDialog    = "dialog"
)

// Views lists every view, in a stable order.
func Views() []View {
	out := []View{{Name: viewInstances}}
	for _, layered := range []bool{false, true} {
		out = append(out, View{Name: graphView(layered)})
	}
	for t := detailTab(0); t < numTabs; t++ {
		for mode := range t.modes() {
			out = append(out, View{Name: t.view(mode), PerNode: t.perNode()})
		}
	}
	out = append(out, graphsViews()...)
	return append(out, View{Name: viewHelp}, View{Name: viewDialog}, View{Name: viewPlan}, View{Name: viewPlanInstance})
}

func graphView(layered bool) string {
	if layered {
		return "graph/layers"
	}
	return "graph/tree"
}

// modes is how many ways the tab shows its content: the YAML tab's
// desired, observed and diff; the Instance tab's summary and YAML.
func (t detailTab) modes() int {
	switch t {
	case tabYAML:
		return int(numYAMLModes)
	case tabInstance:
		return 2
	}
	return 1
}

// perNode: the tab shows the selected node; the others show the instance.
func (t detailTab) perNode() bool { return t == tabInspect || t == tabYAML }

// view names the tab in one of its modes.
func (t detailTab) view(mode int) string {
	name := strings.ToLower(t.String())
	switch {
	case t == tabYAML:
		return name + "/" + yamlMode(mode).String()
	case t == tabInstance && mode == 1:
		return name + "/yaml"
	}
	return name
}

// view names what the detail pane shows now.
func (d *detailPane) view() string {
	mode := 0
	switch {
	case d.tab == tabYAML:
		mode = int(d.ymode)
	case d.tab == tabInstance && d.inst.yaml:
		mode = 1
	}
	return d.tab.view(mode)
}

func (s *instancesScreen) views() []string { return []string{viewInstances} }
func (s *instanceScreen) views() []string {
	return []string{graphView(s.graph.layered), s.detail.view()}
}

// ShownRequest asks a running model what it shows; the reply is sent from
// the program's own goroutine (send it with Program.Send), as FrameRequest's.
type ShownRequest struct{ Reply chan<- Shown }

// Shown is what the model shows now.
type Shown struct {
	Views []string // the views drawn, the screen's first, then its overlays'
	Node  string   // the node selected in the graph, on the instance screen
	Frame string
	// Text is the whole text of the detail pane, of which the frame shows
	// what fits (the instance screen only).
	Text string
}

func (m *Model) shown() Shown {
	sh := Shown{Frame: m.frame()}
	if starting(m.snap) {
		return sh
	}
	bi := m.stack.baseIndex()
	sh.Views = m.stack[bi].views()
	sh.Node, sh.Text = m.stack[bi].shown()
	for _, s := range m.stack[bi+1:] {
		sh.Views = append(sh.Views, s.views()...)
	}
	return sh
}
