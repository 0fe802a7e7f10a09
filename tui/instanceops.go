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

// targeting is what the actions on one instance need: the instance
// they act on now (the list's selected row, or the instance a screen
// shows) and the snapshot (its capabilities and mode). The list and the
// instance screen offer the same actions through it.
type targeting struct {
	c    *common
	in   func() *state.Instance
	snap func() *state.Snapshot
}

// exists: the actions on an instance apply only while it exists (an open
// instance screen outlives its instance).
func (t targeting) exists() bool { return t.in() != nil }

// deletable: a deleting instance is not offered for deletion again.
func (t targeting) deletable() bool { in := t.in(); return in != nil && !in.Deleting }

// Capabilities: what this user may do with the target's kind (the
// engine's access reviews); "" when allowed or unknown.
func (t targeting) access(p func(state.KindAccess) state.Permission) func() string {
	return func() string {
		in, snap := t.in(), t.snap()
		if in == nil || snap == nil {
			return ""
		}
		if perm := p(snap.Capabilities.For(in.Key.Resource)); !perm.Allowed {
			return perm.Why
		}
		return ""
	}
}

// The actions on one instance, declared once for both screens.
func (t targeting) requeueAction() action {
	a := share("requeue", "requeue (skips the backoff)", "requeue", t.requeue)
	a.when, a.denied = t.exists, t.access(func(k state.KindAccess) state.Permission { return k.Requeue })
	return a
}

func (t targeting) deleteAction() action {
	a := share("delete", "delete (asks, lists what goes)", "delete", t.askDelete)
	a.when, a.denied = t.deletable, t.access(func(k state.KindAccess) state.Permission { return k.Delete })
	return a
}

func (t targeting) editAction(short string) action {
	a := share("edit", "edit the instance's spec in $EDITOR (applied as kroscope; refused in --observe)", short, t.startEdit)
	a.when, a.denied = t.deletable, t.access(func(k state.KindAccess) state.Permission { return k.Edit })
	return a
}

// mayNotRequeueAny: requeue-all is denied only when no kind may be requeued.
func mayNotRequeueAny(snap *state.Snapshot) string {
	if snap == nil || len(snap.Capabilities.Kinds) == 0 {
		return ""
	}
	why := ""
	for _, k := range snap.Capabilities.Kinds {
		if k.Requeue.Allowed {
			return ""
		}
		why = k.Requeue.Why
	}
	return why
}

// requeue and requeueAll call the engine in a command, off the UI loop:
// attached, a requeue is a PATCH to the API server (one per instance for
// requeue all), and the keys must keep answering meanwhile.
func (t targeting) requeue() tea.Cmd {
	in := t.in()
	if in == nil {
		t.c.host.flash("nothing selected to requeue", true)
		return nil
	}
	b, c, key, label := t.c.b, t.c, in.Key, name(in)
	t.c.host.flash("requeueing "+label+t.c.th.G.Ellipsis, false)
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

// requeueAll requeues the instances the filter shows.
func requeueAll(c *common, filter string) tea.Cmd {
	q := parseQuery(filter)
	b := c.b
	c.host.flash("requeueing the instances shown"+c.th.G.Ellipsis, false)
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

func (t targeting) askDelete() tea.Cmd {
	in := t.in()
	c := t.c
	if in == nil {
		c.host.flash("nothing selected to delete", true)
		return nil
	}
	plan, kept := deletePlan(in, c.th.G)
	lines := append([]string{"This deletes, in order:"}, plan...)
	if len(kept) > 0 {
		lines = append(lines, "", "Kept (external): "+strings.Join(kept, ", "))
	}
	key, label := in.Key, name(in)
	c.host.push(newDialog(c, fmt.Sprintf("Delete %s %s?", in.Kind, label), lines, "Delete", func() tea.Cmd {
		c.host.flash("deleting "+label+c.th.G.Ellipsis, false)
		b, timeout := c.b, c.opts.DeleteTimeout
		return func() tea.Msg {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			if err := inertErr(b.Delete(ctx, key)); err != nil {
				return resultMsg{err: fmt.Errorf("delete %s: %w", label, err)}
			}
			return resultMsg{text: "deleted " + label + " (resources follow in reverse order)"}
		}
	}))
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
