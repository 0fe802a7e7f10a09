package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

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

// planRow is one instance of the blast radius.
type planRow struct {
	graph, kind string
	// schema is the graph's CRD change, shown in the instance's diff
	// (not counted in its row: it is one change for every instance).
	schema *plan.Schema
	in     plan.Instance
	sum    plan.Summary
}

// planScreen is the blast radius of a plan: one row per instance with its
// counts, failures first; enter shows the instance's diff.
type planScreen struct {
	screenDefaults
	c      *common
	acts   []action
	what   string
	paths  []string // the files planned; none: the served --rgd files
	graphs []string // the graphs planned, in plan order
	rows   []planRow
	total  plan.Summary
	cursor int
	open   bool // showing rows[cursor]'s diff
	off    int  // the diff's scroll
	w, h   int
	lines  []string
}

func newPlanScreen(c *common, what string, plans []*plan.Plan) *planScreen {
	s := &planScreen{c: c, what: what, total: plan.Summarize(plans)}
	for _, p := range plans {
		s.graphs = append(s.graphs, p.Graph)
		for _, in := range p.Instances {
			one := &plan.Plan{Graph: p.Graph, Kind: p.Kind, Instances: []plan.Instance{in}}
			s.rows = append(s.rows, planRow{graph: p.Graph, kind: p.Kind, schema: p.Schema, in: in, sum: plan.Summarize([]*plan.Plan{one})})
		}
	}
	// Failures first, then the most changed.
	slices.SortStableFunc(s.rows, func(a, b planRow) int {
		if fa, fb := a.sum.Fail > 0, b.sum.Fail > 0; fa != fb {
			if fa {
				return -1
			}
			return 1
		}
		return (b.sum.Create + b.sum.Change + b.sum.Prune) - (a.sum.Create + a.sum.Change + a.sum.Prune)
	})
	s.acts = s.actions()
	return s
}

func (s *planScreen) Update(tea.Msg) tea.Cmd     { return nil }
func (s *planScreen) SetSize(w, h int)           { s.w, s.h = w, h }
func (s *planScreen) bindings() ([]action, bool) { return s.acts, true }
func (s *planScreen) View() string               { return strings.Join(s.lines, "\n") }

func (s *planScreen) views() []string {
	if s.open {
		return []string{viewPlanInstance}
	}
	return []string{viewPlan}
}

// move moves the cursor, or scrolls the open diff.
func (s *planScreen) move(d int) {
	if s.open {
		s.off = max(s.off+d, 0)
		return
	}
	s.cursor = clamp(s.cursor+d, 0, max(len(s.rows)-1, 0))
}

func (s *planScreen) prepare() {
	th := s.c.th
	if s.open && s.cursor < len(s.rows) {
		s.lines = s.diffLines()
		return
	}
	// The summary has a line of its own: beside the file's name it was
	// cut at 100 columns.
	w := max(s.w, 20)
	out := []string{th.Title.Render(clip("Plan of "+s.what, w, th.G.Ellipsis)), th.Dim.Render(clip(s.total.Line(), w, th.G.Ellipsis))}
	out = append(out, th.Label.Render(fmt.Sprintf("%-6s %-6s %-6s %-6s %s", "CREATE", "CHANGE", "PRUNE", "FAIL", "INSTANCE")))
	for i, r := range s.rows {
		line := fmt.Sprintf("%-6d %-6d %-6d %-6d %s", r.sum.Create, r.sum.Change, r.sum.Prune, r.sum.Fail, qualifiedName(r.in)+" ("+r.graph+")")
		line = clip(line, max(s.w, 20), th.G.Ellipsis)
		if i == s.cursor {
			line = th.Selected.Render(line)
		}
		out = append(out, line)
	}
	if len(s.rows) == 0 {
		out = append(out, th.Dim.Render("no instances"))
	}
	s.lines = out
}

// diffLines are the open instance's plan as `kroscope plan` prints it.
func (s *planScreen) diffLines() []string {
	r := s.rows[s.cursor]
	var b strings.Builder
	_ = plan.Text(&b, []*plan.Plan{{Graph: r.graph, Kind: r.kind, Schema: r.schema, Instances: []plan.Instance{r.in}}})
	all := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(all) > 0 {
		all = all[1:] // the graph line: the title says it
	}
	s.off = min(s.off, max(len(all)-1, 0))
	out := []string{s.c.th.Title.Render("Plan of " + qualifiedName(r.in) + " (" + r.graph + ")")}
	for _, l := range all[s.off:] {
		out = append(out, clip(l, max(s.w, 20), s.c.th.G.Ellipsis))
	}
	return out
}

func qualifiedName(in plan.Instance) string {
	if in.Namespace == "" {
		return in.Name
	}
	return in.Namespace + "/" + in.Name
}

func (s *planScreen) actions() []action {
	return offer(
		share("back", "back (the list, or the previous screen)", "back", do0(s.back)),
		share("open", "show the instance's diff", "diff", do0(func() { s.open = len(s.rows) > 0 })),
		action{name: "applyGraph", keys: []string{"a"}, help: "apply the graph to the cluster (asks first), then follow the rollout", short: "apply", do: s.askApply},
		share("up", "up", "", do0(func() { s.move(-1) })),
		share("down", "down", "", do0(func() { s.move(1) })),
	)
}

// back closes the open diff, else the plan.
func (s *planScreen) back() {
	if s.open {
		s.open, s.off = false, 0
		return
	}
	s.c.host.pop()
}
