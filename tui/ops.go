package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/theme"
)

// The actions that reach the backend or open another screen. They act on
// the instance shown (instance screen) or the selected row (list).

// target is the instance the actions apply to, or nil.
func (m *Model) target() *state.Instance {
	if d := m.detail(); d != nil {
		return d.instance()
	}
	return m.list().selected()
}

// hasTarget: the actions on an instance apply only while it exists (an
// open instance screen outlives its instance).
func hasTarget(m *Model) bool { return m.target() != nil }

// deletable: a deleting instance is not offered for deletion again.
func deletable(m *Model) bool { in := m.target(); return in != nil && !in.Deleting }

// Capabilities: what this user may do with the target's kind (the
// engine's access reviews); "" when allowed or unknown.
func mayNotRequeue(m *Model) string {
	return targetAccess(m, func(k state.KindAccess) state.Permission { return k.Requeue })
}
func mayNotDelete(m *Model) string {
	return targetAccess(m, func(k state.KindAccess) state.Permission { return k.Delete })
}
func mayNotEdit(m *Model) string {
	return targetAccess(m, func(k state.KindAccess) state.Permission { return k.Edit })
}

func targetAccess(m *Model, p func(state.KindAccess) state.Permission) string {
	in := m.target()
	if in == nil || m.snap == nil {
		return ""
	}
	if perm := p(m.snap.Capabilities.For(in.Key.Resource)); !perm.Allowed {
		return perm.Why
	}
	return ""
}

// mayNotRequeueAny: requeue-all is denied only when no kind may be requeued.
func mayNotRequeueAny(m *Model) string {
	if m.snap == nil || len(m.snap.Capabilities.Kinds) == 0 {
		return ""
	}
	why := ""
	for _, k := range m.snap.Capabilities.Kinds {
		if k.Requeue.Allowed {
			return ""
		}
		why = k.Requeue.Why
	}
	return why
}

// open drills into the selected instance on the given tab.
func (m *Model) open(t detailTab) {
	in := m.list().selected()
	if in == nil {
		return
	}
	m.list().follow()
	s := newInstanceScreen(m.c, in.Key)
	s.detail.setTab(t)
	m.push(s)
}

// requeue and requeueAll call the engine in a command, off the UI loop:
// attached, a requeue is a PATCH to the API server (one per instance for
// requeue all), and the keys must keep answering meanwhile.
func (m *Model) requeue() tea.Cmd {
	in := m.target()
	if in == nil {
		m.setFlash("nothing selected to requeue", true)
		return nil
	}
	b, c, key, label := m.c.b, m.c, in.Key, name(in)
	m.setFlash("requeueing "+label+m.c.th.G.Ellipsis, false)
	return func() tea.Msg {
		if err := inertErr(b.Requeue(key)); err != nil {
			return resultMsg{err: fmt.Errorf("requeue %s: %w", label, err)}
		}
		return resultMsg{text: "requeued " + label + requeueNote(c)}
	}
}

// requeueNote says how a requeue reached the reconciler when this
// kroscope is attached (the engine's words, read after the call).
func requeueNote(c *common) string {
	if snap := c.snapshot(); snap != nil && snap.Mode.RequeueNote != "" {
		return ": " + snap.Mode.RequeueNote
	}
	return ""
}

func (m *Model) requeueAll() tea.Cmd {
	q := parseQuery(m.list().query)
	b, c := m.c.b, m.c
	m.setFlash("requeueing the instances shown"+m.c.th.G.Ellipsis, false)
	return func() tea.Msg {
		n, err := inert(b.RequeueAll(q.match))
		if err != nil {
			return resultMsg{err: fmt.Errorf("requeue all: %w", err)}
		}
		return resultMsg{text: "requeued " + plural(n, "instance") + requeueNote(c)}
	}
}

// deletePlan lists what deleting the instance removes, in order: its
// resources in reverse topological order (externals are never deleted),
// then the instance itself.
func deletePlan(in *state.Instance, g theme.Glyphs) (lines []string, kept []string) {
	n := 0
	for i := len(in.Resources) - 1; i >= 0; i-- {
		r := in.Resources[i]
		if r.External {
			kept = append(kept, r.ID)
			continue
		}
		if r.Phase() == state.PhaseSkipped || r.Name == "" {
			continue // never created
		}
		n++
		obj := r.Name
		if r.Namespace != "" {
			obj = r.Namespace + "/" + r.Name
		}
		lines = append(lines, fmt.Sprintf("%d. %s %s %s %s", n, r.ID, g.Arrow, r.Kind, obj))
	}
	n++
	lines = append(lines, fmt.Sprintf("%d. the instance %s %s", n, in.Kind, name(in)))
	return lines, kept
}

func (m *Model) askDelete() tea.Cmd {
	in := m.target()
	if in == nil {
		m.setFlash("nothing selected to delete", true)
		return nil
	}
	plan, kept := deletePlan(in, m.c.th.G)
	lines := append([]string{"This deletes, in order:"}, plan...)
	if len(kept) > 0 {
		lines = append(lines, "", "Kept (external): "+strings.Join(kept, ", "))
	}
	key, label := in.Key, name(in)
	m.push(&dialogScreen{
		c:       m.c,
		title:   fmt.Sprintf("Delete %s %s?", in.Kind, label),
		lines:   lines,
		confirm: "Delete",
		onYes: func(m *Model) tea.Cmd {
			m.setFlash("deleting "+label+m.c.th.G.Ellipsis, false)
			b, timeout := m.c.b, m.c.opts.DeleteTimeout
			return func() tea.Msg {
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				defer cancel()
				if err := inertErr(b.Delete(ctx, key)); err != nil {
					return resultMsg{err: fmt.Errorf("delete %s: %w", label, err)}
				}
				return resultMsg{text: "deleted " + label + " (resources follow in reverse order)"}
			}
		},
	})
	return nil
}

func (m *Model) askReveal() tea.Cmd {
	d := m.detail()
	var r *state.Resource
	if d != nil {
		r = d.resource()
	}
	if r == nil || !isSecret(r) {
		m.setFlash("select a Secret to reveal its data", true)
		return nil
	}
	k := revealKey{d.key, r.ID}
	if d.detail.revealed[k] {
		delete(d.detail.revealed, k)
		m.setFlash("secret data hidden", false)
		return nil
	}
	m.push(&dialogScreen{
		c:       m.c,
		title:   fmt.Sprintf("Reveal the data of Secret %s?", r.ID),
		lines:   []string{"Its values will be shown in clear on this screen."},
		confirm: "Reveal",
		onYes: func(m *Model) tea.Cmd {
			d.detail.revealed[k] = true
			m.setFlash("secret data revealed ("+m.keys().label("reveal")+" hides it)", false)
			return nil
		},
	})
	return nil
}

// failedAt returns the index in the graph order of the first resource in
// error at or after from (wrapping), or -1.
func failedAt(in *state.Instance, order []string, from int) int {
	for step := range len(order) {
		i := (from + step) % len(order)
		if r := in.Resource(order[i]); r != nil && r.Phase().Class() == state.ClassFailed {
			return i
		}
	}
	return -1
}

// nextError selects the next resource in error (across instances from the
// list) and shows its error. An error that cleared meanwhile still leads to
// the resource it named, never to whatever the cursor was on.
func (m *Model) nextError() tea.Cmd {
	now := m.c.now()
	if d := m.detail(); d != nil {
		in := d.instance()
		if in != nil && len(d.graph.tree.order) > 0 {
			if i := failedAt(in, d.graph.tree.order, d.graph.node+1); i >= 0 {
				d.graph.select1(i)
				d.detail.setTab(tabInspect)
				m.setFlash("error in "+d.graph.nodeID, true)
				return nil
			}
		}
		if in != nil && in.Phase().Class() == state.ClassFailed && (in.LastError == nil || in.LastError.Resource == "") {
			m.setFlash("instance error: "+in.Message, true)
			return nil
		}
		if in != nil && in.LastError != nil {
			if j := d.graph.indexOf(in.LastError.Resource); j >= 0 {
				d.graph.select1(j)
				d.detail.setTab(tabInspect)
			}
			m.setFlash(errorFlash(in, now), true)
			return nil
		}
		m.setFlash("no resource in error", false)
		return nil
	}
	l := m.list()
	land := func(i int, in *state.Instance) {
		l.cursor = i
		m.open(tabInspect)
		d := m.detail()
		if j := failedAt(in, d.graph.tree.order, 0); j >= 0 {
			d.graph.select1(j)
		} else if in.LastError != nil {
			d.graph.select1(d.graph.indexOf(in.LastError.Resource))
		}
	}
	for step := 1; step <= len(l.rows); step++ {
		i := (l.cursor + step) % len(l.rows)
		in := l.rows[i]
		if in.Phase().Class() != state.ClassFailed {
			continue
		}
		land(i, in)
		m.setFlash(errorFlash(in, now), true)
		return nil
	}
	// Nothing fails now: go to the error that cleared last.
	best := -1
	for i, in := range l.rows {
		if in.LastError != nil && (best < 0 || in.LastError.At.After(l.rows[best].LastError.At)) {
			best = i
		}
	}
	if best >= 0 {
		in := l.rows[best]
		land(best, in)
		m.setFlash("no instance in error now; last: "+errorFlash(in, now), true)
		return nil
	}
	m.setFlash("no instance in error", false)
	return nil
}

// errorFlash names the instance and the resource of its (remembered) error.
func errorFlash(in *state.Instance, now time.Time) string {
	out := "error in " + name(in)
	le := in.LastError
	if le == nil {
		return out
	}
	msg := errorSummary(le, now)
	if le.Resource != "" {
		out += " " + le.Resource
		// The instance's message names the resource already ("quota:
		// ..."): say it once.
		msg = strings.TrimPrefix(msg, le.Resource+": ")
	}
	return out + ": " + msg
}
