package tui

import (
	"strconv"
	"strings"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/theme"
)

// readyChecksView renders each readyWhen condition with a mark (true,
// false, pending) and, under it, the values of the fields it reads, so the
// false one and its operands can be read at a glance.
func readyChecksView(th *theme.Theme, cs []state.ReadyCheck, w int) []string {
	const lw = 12
	var out []string
	for i, c := range cs {
		label := ""
		if i == 0 {
			label = "readyWhen"
		}
		mark, st := th.ClassGlyph(state.ClassOK, 0), th.ClassStyle(state.ClassOK)
		switch {
		case c.OK:
		case strings.HasPrefix(c.Result, "pending"):
			mark, st = th.ClassGlyph(state.ClassPending, 0), th.ClassStyle(state.ClassPending)
		default:
			mark, st = th.ClassGlyph(state.ClassFailed, 0), th.ClassStyle(state.ClassFailed)
		}
		head := st.Render(mark) + " " + expr(c.Expr)
		if !c.OK {
			head += "  " + st.Render(checkVerdict(c))
		}
		for j, l := range wrap(head, max(w-lw, 8)) {
			if j == 0 {
				out = append(out, th.Label.Render(fit(label, lw, ""))+l)
			} else {
				out = append(out, strings.Repeat(" ", lw+2)+l)
			}
		}
		for _, o := range c.Operands {
			v := o.Value
			if o.Missing {
				v = th.Dim.Render("(no value)")
			}
			out = append(out, clip(strings.Repeat(" ", lw+2)+th.Dim.Render(o.Path+" = ")+v, w, th.G.Ellipsis))
		}
	}
	return out
}

// checkVerdict is what a condition that did not pass came to.
func checkVerdict(c state.ReadyCheck) string {
	if c.Result == "false" {
		return "is false"
	}
	return c.Result
}

// readyWhy is the one-line reason of a resource waiting on readyWhen: the
// first condition that did not pass, with its operands' values
// ("readyWhen ${...} is false (availableReplicas=1, replicas=1)"); "" when
// no condition was judged.
func readyWhy(r *state.Resource) string {
	var bad []state.ReadyCheck
	for _, c := range r.ReadyChecks {
		if !c.OK {
			bad = append(bad, c)
		}
	}
	if len(bad) == 0 {
		return ""
	}
	c := bad[0]
	var vals []string
	for _, o := range c.Operands {
		name := o.Path[strings.LastIndex(o.Path, ".")+1:]
		v := o.Value
		if o.Missing {
			v = "(no value)"
		}
		vals = append(vals, name+"="+v)
	}
	out := "readyWhen " + expr(c.Expr) + " " + checkVerdict(c)
	if len(vals) > 0 {
		out += " (" + strings.Join(vals, ", ") + ")"
	}
	if more := len(bad) - 1; more > 0 {
		out += " and " + plural(more, "more condition")
	}
	return out
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
