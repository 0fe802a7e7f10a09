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

// planAppliedMsg is an apply's answer: the graphs written, or why not.
type planAppliedMsg struct {
	names []string
	err   error
}

// askApplyGraph asks for confirmation, saying what applying the plan's
// files will do, unless the engine would refuse (then it says why).
func (m *Model) askApplyGraph(s *planScreen) tea.Cmd {
	ap, ok := m.c.b.(GraphApplier)
	if !ok {
		m.setFlash("this backend cannot apply a graph", true)
		return nil
	}
	if err := inertErr(ap.ApplyGraphRefused(s.paths...)); err != nil {
		m.setFlash(err.Error(), true)
		return nil
	}
	paths, t := s.paths, s.total
	lines := []string{
		fmt.Sprintf("%d to create, %d to change, %d to prune across %d instances; %d would fail.", t.Create, t.Change, t.Prune, t.Instances, t.Fail),
		"",
		"This writes the definition to the cluster (server-side apply, field manager kroscope);",
		"every instance is then reconciled with it, and the instance list shows the rollout.",
	}
	m.push(&dialogScreen{
		c:       m.c,
		title:   fmt.Sprintf("Apply graph %s from %s?", strings.Join(s.graphs, ", "), strings.Join(paths, " ")),
		lines:   lines,
		confirm: "Apply",
		onYes: func(m *Model) tea.Cmd {
			m.setFlash("applying "+strings.Join(paths, " ")+m.c.th.G.Ellipsis, false)
			return func() tea.Msg {
				ctx, cancel := context.WithTimeout(context.Background(), applyTimeout)
				defer cancel()
				names, err := inert(ap.ApplyGraphs(ctx, paths...))
				return planAppliedMsg{names: names, err: err}
			}
		},
	})
	return nil
}

// planApplied goes back to the instance list, where the rollout shows,
// or flashes why the apply failed (the plan stays).
func (m *Model) planApplied(msg planAppliedMsg) {
	if msg.err != nil {
		m.setFlash("apply: "+msg.err.Error(), true)
		return
	}
	for len(m.stack) > 1 {
		if _, ok := m.top().(*planScreen); !ok {
			break
		}
		m.pop()
	}
	m.setFlash("applied graph "+strings.Join(msg.names, ", ")+": the instance list follows the rollout", false)
}
