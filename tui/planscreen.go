package tui

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/plan"
)

// PlanRunner is what `:plan` needs of a backend: the engine plans the
// graph files (none: the files it serves) with dry runs and hands back
// the result. The TUI never calls the API server itself.
type PlanRunner interface {
	Plan(ctx context.Context, paths ...string) ([]*plan.Plan, error)
}

// planTimeout bounds one plan.
const planTimeout = 2 * time.Minute

const (
	viewPlan         = "plan"
	viewPlanInstance = "plan/instance"
)

// startPlan asks the backend to plan the files (the served ones when
// none) and shows the blast radius when it answers.
func startPlan(c *common, arg string) tea.Cmd {
	pr, ok := c.b.(PlanRunner)
	if !ok {
		c.host.flash("this backend cannot plan", true)
		return nil
	}
	paths := strings.Fields(arg)
	what := strings.Join(paths, " ")
	if what == "" {
		what = "the served graph files"
	}
	c.host.flash("planning "+what+" (dry runs only)...", false)
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), planTimeout)
		defer cancel()
		plans, err := inert(pr.Plan(ctx, paths...))
		// A finished plan shows (and what failed in it).
		var out requestsMsg
		if err != nil {
			out = append(out, flashReq("plan: "+err.Error(), true))
		}
		if len(plans) > 0 {
			s := newPlanScreen(c, what, plans)
			s.paths = paths
			out = append(out, pushReq(s))
		}
		return out
	}
}

// planRow is one instance of the blast radius, or a graph's breaking
// CRD change (crd): the summary counts that as a failure, and a row of
// its own makes the rows add up to the summary.
type planRow struct {
	graph, kind string
	// schema is the graph's CRD change, shown in the instance's diff
	// (not counted in its row: it is one change for every instance).
	schema *plan.Schema
	crd    bool
	in     plan.Instance
	sum    plan.Summary
}

// breaking reports whether a graph's plan changes its CRD in a way the
// engine refuses (unless the definition allows it, or --force-crd).
func breaking(s *plan.Schema) bool { return s != nil && len(s.Breaking) > 0 }

// id is the row's identity, which the cursor keeps.
func (r planRow) id() string {
	if r.crd {
		return r.graph + " CRD"
	}
	return r.graph + "/" + qualifiedName(r.in)
}

// label is the INSTANCE cell.
func (r planRow) label() string {
	if r.crd {
		return "CRD " + r.schema.CRD + " (" + r.graph + "): breaking schema change"
	}
	return qualifiedName(r.in) + " (" + r.graph + ")"
}

// planScreen is the blast radius of a plan: one row per instance with its
// counts, failures first; enter shows the instance's diff.
type planScreen struct {
	screenDefaults
	c      *common
	acts   []action
	snap   *state.Snapshot // which graphs are served from files
	what   string
	paths  []string  // the files planned; none: the served --rgd files
	graphs []string  // the graphs planned, in plan order
	all    []planRow // failures first, then the most changed
	table  *table[planRow, string, struct{}]
	total  plan.Summary
	open   bool // showing the selected row's diff
	off    int  // the diff's scroll
	w, h   int
	lines  []string

	diffActs   []action
	promptLine string
}

func newPlanScreen(c *common, what string, plans []*plan.Plan) *planScreen {
	s := &planScreen{c: c, what: what, total: plan.Summarize(plans), snap: &state.Snapshot{}}
	for _, p := range plans {
		s.graphs = append(s.graphs, p.Graph)
		if breaking(p.Schema) {
			s.all = append(s.all, planRow{graph: p.Graph, kind: p.Kind, schema: p.Schema, crd: true, sum: plan.Summary{Fail: 1}})
		}
		for _, in := range p.Instances {
			one := &plan.Plan{Graph: p.Graph, Kind: p.Kind, Instances: []plan.Instance{in}}
			s.all = append(s.all, planRow{graph: p.Graph, kind: p.Kind, schema: p.Schema, in: in, sum: plan.Summarize([]*plan.Plan{one})})
		}
	}
	// Failures first, then the most changed.
	slices.SortStableFunc(s.all, func(a, b planRow) int {
		if fa, fb := a.sum.Fail > 0, b.sum.Fail > 0; fa != fb {
			if fa {
				return -1
			}
			return 1
		}
		return (b.sum.Create + b.sum.Change + b.sum.Prune) - (a.sum.Create + a.sum.Change + a.sum.Prune)
	})
	s.table = newTable[planRow, string, struct{}](c, "text: an instance or its graph", s.columns(), nil, planRow.id, s.rebuild)
	s.rebuild()
	s.acts, s.diffActs = s.actions(), s.diffActions()
	return s
}

// rebuild keeps the rows the filter takes (the order is the plan's).
func (s *planScreen) rebuild() {
	q := strings.Fields(strings.ToLower(s.table.query))
	rows := make([]planRow, 0, len(s.all))
	for _, r := range s.all {
		hay := strings.ToLower(r.label() + " " + r.kind)
		if !slices.ContainsFunc(q, func(w string) bool { return !strings.Contains(hay, w) }) {
			rows = append(rows, r)
		}
	}
	s.table.setRows(rows)
}

// columns are the blast radius's: the counts, then the instance.
func (s *planScreen) columns() []column[planRow] {
	count := func(header string, n func(plan.Summary) int) column[planRow] {
		return column[planRow]{header: header, width: func() int { return 6 }, cell: func(r planRow, _ int) string { return strconv.Itoa(n(r.sum)) }}
	}
	return []column[planRow]{
		count("CREATE", func(m plan.Summary) int { return m.Create }),
		count("CHANGE", func(m plan.Summary) int { return m.Change }),
		count("PRUNE", func(m plan.Summary) int { return m.Prune }),
		count("FAIL", func(m plan.Summary) int { return m.Fail }),
		{header: "INSTANCE", flex: func(rest int) int { return max(rest, 0) },
			cell: func(r planRow, _ int) string { return r.label() }},
	}
}

// Update: the table's clicks, wheel and filter typing.
func (s *planScreen) Update(msg tea.Msg) tea.Cmd {
	if m, ok := msg.(snapMsg); ok {
		s.snap = m.snap
		return nil
	}
	if s.open {
		s.c.explain(msg, "plan diff", s.diffActs)
		return nil
	}
	cmd, took := s.table.update(msg)
	if !took {
		s.c.explain(msg, "plan", s.acts)
	}
	return cmd
}

func (s *planScreen) SetSize(w, h int) {
	s.w, s.h = w, h
	s.table.input.SetWidth(max(w-2, 1))
}

func (s *planScreen) bindings() ([]action, bool) {
	switch {
	case s.open:
		return s.diffActs, true
	case s.table.typing:
		return s.table.filterActs, false
	}
	return s.acts, true
}

func (s *planScreen) prompt() (string, bool) { return s.promptLine, s.table.typing }
func (s *planScreen) View() string           { return strings.Join(s.lines, "\n") }

func (s *planScreen) views() []string {
	if s.open {
		return []string{viewPlanInstance}
	}
	return []string{viewPlan}
}

func (s *planScreen) prepare() {
	th := s.c.th
	if r, ok := s.table.selected(); ok && s.open {
		s.lines = s.diffLines(r)
		s.promptLine = ""
		return
	}
	// The summary has a line of its own: beside the file's name it was
	// cut at 100 columns.
	w := max(s.w, 20)
	out := []string{th.Title.Render(clip("Plan of "+s.what, w, th.G.Ellipsis)), th.Dim.Render(clip(s.total.Line(), w, th.G.Ellipsis))}
	t := s.table
	h := max(s.h-2, 2)
	empty := "no instances"
	if t.query != "" {
		empty = fmt.Sprintf("No instance matches %q (esc clears the filter).", t.query)
	}
	lines := t.render(h, w, empty)
	if pos := t.position(); pos != "" {
		out[1] += th.Dim.Render("  (" + pos + ")")
	}
	// Padded to the screen: the footer stays at the bottom.
	s.lines = padLines(append(out, lines...), w, max(s.h, 1))
	s.promptLine = t.prompt(w)
}

// diffLines are the open row's plan as `kroscope plan` prints it, each
// line wrapped (a field's value is worth reading whole), scrolled to
// s.off, in exactly the screen's lines.
func (s *planScreen) diffLines(r planRow) []string {
	th, w := s.c.th, max(s.w, 20)
	var all []string
	for _, l := range planText(r) {
		all = append(all, wrapIndented(l, w)...)
	}
	rows := max(s.h-1, 1)
	s.off = clamp(s.off, 0, max(len(all)-rows, 0))
	shown := slices.Clone(all[s.off:min(s.off+rows, len(all))])
	if below := len(all) - s.off - len(shown); below > 0 && len(shown) > 1 {
		shown[len(shown)-1] = th.Dim.Render(fmt.Sprintf("%s %d more lines (j, pgdown)", th.G.Ellipsis, below+1))
	}
	out := append([]string{th.Title.Render(clip("Plan of "+r.label(), w, th.G.Ellipsis))}, shown...)
	return block(out, w, max(s.h, 1), th.G.Ellipsis)
}

// planText is a row's plan as `kroscope plan` prints it, without the
// graph line (the title says it).
func planText(r planRow) []string {
	var b strings.Builder
	one := &plan.Plan{Graph: r.graph, Kind: r.kind, Schema: r.schema, Instances: []plan.Instance{r.in}}
	if r.crd {
		one.Instances = nil
	}
	_ = plan.Text(&b, []*plan.Plan{one})
	all := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(all) > 0 {
		all = all[1:]
	}
	if r.crd { // the CRD row is not about instances
		all = slices.DeleteFunc(all, func(l string) bool { return l == "  no instances" })
	}
	return all
}

func qualifiedName(in plan.Instance) string {
	if in.Namespace == "" {
		return in.Name
	}
	return in.Namespace + "/" + in.Name
}

func (s *planScreen) actions() []action {
	open := share("open", "show the instance's diff", "diff", do0(func() { s.open, s.off = true, 0 }))
	open.when = func() bool { _, ok := s.table.selected(); return ok }
	filter, _, moves := s.table.actions("filter the instances (text: an instance or its graph)")
	acts := []action{
		share("back", "back (the list, or the previous screen)", "back", do0(s.back)), open,
		action{name: "applyGraph", keys: []string{"a"}, help: "apply the graph to the cluster (asks first), then follow the rollout", short: "apply", do: s.askApply},
		filter,
	}
	return offer(append(acts, moves...)...)
}

// diffActions scroll the open diff (prepare keeps s.off in range).
func (s *planScreen) diffActions() []action {
	by := func(n func() int) func() tea.Cmd { return do0(func() { s.off = max(s.off+n(), 0) }) }
	page := func() int { return max(s.h-2, 1) }
	return offer(
		share("back", "back to the blast radius", "back", do0(s.back)),
		share("up", "scroll up", "", by(func() int { return -1 })),
		share("down", "scroll down", "", by(func() int { return 1 })),
		share("pageUp", "page up", "", by(func() int { return -page() })),
		share("pageDown", "page down", "", by(page)),
		share("top", "top", "", by(func() int { return -1 << 30 })),
		share("bottom", "bottom", "", by(func() int { return 1 << 30 })),
	)
}

// back closes the open diff, else the plan; a filter is cleared first.
func (s *planScreen) back() {
	switch {
	case s.open:
		s.open, s.off = false, 0
	case s.table.query != "":
		s.table.filterTo("")
	default:
		s.c.host.pop()
	}
}
