package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
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
	paths, t := s.paths, s.total
	lines := []string{
		fmt.Sprintf("%d to create, %d to change, %d to prune across %d instances; %d would fail.", t.Create, t.Change, t.Prune, t.Instances, t.Fail),
		"",
		"This writes the definition to the cluster (server-side apply, field manager kroscope);",
		"every instance is then reconciled with it, and the instance list shows the rollout.",
	}
	title := fmt.Sprintf("Apply graph %s from %s?", strings.Join(s.graphs, ", "), strings.Join(paths, " "))
	h.push(newDialog(s.c, title, lines, "Apply", func() tea.Cmd {
		h.flash("applying "+strings.Join(paths, " ")+s.c.th.G.Ellipsis, false)
		return func() tea.Msg {
			ctx, cancel := context.WithTimeout(context.Background(), applyTimeout)
			defer cancel()
			names, err := inert(ap.ApplyGraphs(ctx, paths...))
			return applied(names, err)
		}
	}))
	return nil
}

// applied goes back to the instance list, where the rollout shows, or
// flashes why the apply failed (the plan stays).
func applied(names []string, err error) requestsMsg {
	if err != nil {
		return requestsMsg{flashReq("apply: "+err.Error(), true)}
	}
	isPlan := func(s screen) bool { _, ok := s.(*planScreen); return ok }
	return requestsMsg{{op: reqPopWhile, match: isPlan},
		flashReq("applied graph "+strings.Join(names, ", ")+": the instance list follows the rollout", false)}
}
