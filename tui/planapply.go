package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kroscope/kroscope/reconciler/graph/crd/compat"
)

// GraphApplier is what the plan view's apply needs of a backend: the
// engine says whether it would refuse (no call to the API server), and
// writes the graph files' definitions to the cluster. The TUI never
// calls the API server itself.
type GraphApplier interface {
	ApplyGraphRefused(paths ...string) error
	ApplyGraphs(ctx context.Context, paths ...string) ([]string, error)
}

// applyTimeout bounds one apply.
const applyTimeout = time.Minute

// askApply asks for confirmation, saying what applying the plan's files
// will do, unless the engine would refuse (then it says why).
func (s *planScreen) askApply() tea.Cmd {
	h := s.c.host
	ap, ok := s.c.b.(GraphApplier)
	if !ok {
		h.flash("this backend cannot apply a graph", true)
		return nil
	}
	if err := inertErr(ap.ApplyGraphRefused(s.paths...)); err != nil {
		h.flash(err.Error(), true)
		return nil
	}
	if why := s.servedFromFile(); why != "" { // the engine would refuse it only once asked
		h.flash(why, true)
		return nil
	}
	paths, t := s.paths, s.total
	lines := []string{fmt.Sprintf("%d to create, %d to change, %d to prune across %d instances; %d would fail.", t.Create, t.Change, t.Prune, t.Instances, t.Fail)}
	refused := s.refusedGraphs()
	for _, g := range refused {
		lines = append(lines, "", fmt.Sprintf("The engine will refuse graph %s: its CRD change breaks the instances stored under it. It then serves none of them: they stay on the list, not reconciled, until a definition that fits them is applied (unless the definition carries %s: \"true\", or kroscope runs with --force-crd).", g, compat.AllowAnnotation))
	}
	then := "; every instance is then reconciled with it, and the instance list shows the rollout."
	if len(refused) > 0 {
		then = "."
	}
	lines = append(lines, "", "This writes the definition to the cluster (server-side apply, field manager kroscope)"+then)
	title := fmt.Sprintf("Apply graph %s from %s?", strings.Join(s.graphs, ", "), strings.Join(paths, " "))
	h.push(newDialog(s.c, title, lines, "Apply", func() tea.Cmd {
		h.flash("applying "+strings.Join(paths, " ")+s.c.th.G.Ellipsis, false)
		return func() tea.Msg {
			ctx, cancel := context.WithTimeout(context.Background(), applyTimeout)
			defer cancel()
			names, err := inert(ap.ApplyGraphs(ctx, paths...))
			return applied(names, refused, err)
		}
	}))
	return nil
}

// refusedGraphs are the planned graphs whose CRD change the engine
// refuses.
func (s *planScreen) refusedGraphs() []string {
	var out []string
	for _, r := range s.all {
		if r.crd {
			out = append(out, r.graph)
		}
	}
	return out
}

// servedFromFile is why a planned graph cannot be applied: this
// kroscope serves it from an --rgd file, which applying to the cluster
// does not change ("" when none is).
func (s *planScreen) servedFromFile() string {
	for _, g := range s.snap.Graphs {
		if slices.Contains(s.graphs, g.Name) && g.Source != "" && g.Source != "cluster" {
			return fmt.Sprintf("not applying: this kroscope serves graph %s from --rgd %s, not from the cluster; restart it with the edited file", g.Name, g.Source)
		}
	}
	return ""
}

// applied goes back to the instance list, where the rollout shows, or
// flashes why the apply failed (the plan stays). A graph the engine
// refuses (refused) rolls nothing out: the flash says so.
func applied(names, refused []string, err error) requestsMsg {
	if err != nil {
		return requestsMsg{flashReq("apply: "+err.Error(), true)}
	}
	isPlan := func(s screen) bool { _, ok := s.(*planScreen); return ok }
	flash := flashReq("applied graph "+strings.Join(names, ", ")+": the instance list follows the rollout", false)
	if len(refused) > 0 {
		flash = flashReq("applied graph "+strings.Join(names, ", ")+"; the engine refuses "+strings.Join(refused, ", ")+" (breaking CRD change): its instances stay listed, not served (D shows why)", true)
	}
	return requestsMsg{{op: reqPopWhile, match: isPlan}, flash}
}
