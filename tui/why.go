package tui

import (
	"strconv"
	"strings"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/theme"
)

// readyChecksView renders each readyWhen condition with a mark (true,
// false, pending) and, under it, the values of the fields it reads, so the
// false one and its operands can be read at a glance.
func readyChecksView(th *theme.Theme, r *state.Resource, w int) []string {
	const lw = 12
	var out []string
	val := operands(r)
	for i, c := range r.ReadyChecks {
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
			v, ok := val(o)
			if !ok {
				v = th.Dim.Render("(no value)")
			}
			out = append(out, clip(strings.Repeat(" ", lw+2)+th.Dim.Render(o.Path+" = ")+v, w, th.G.Ellipsis))
		}
	}
	return out
}

// operands gives an operand's value as the check read it or, when the
// check stopped before reading it, as the observed object has it:
// cel-go's == returns its left side's error without evaluating its right,
// so "deployment.spec.replicas" read "(no value)" on a Deployment that
// has replicas: 2 and no status yet. The object is decoded (through the
// intake) once, and only when an operand needs it.
func operands(r *state.Resource) func(state.Operand) (string, bool) {
	var obj map[string]any
	decoded := false
	return func(o state.Operand) (string, bool) {
		if !o.Missing {
			return o.Value, true
		}
		if !decoded {
			obj, _ = inert(r.ObservedObject(), nil)
			decoded = true
		}
		path := strings.Split(o.Path, ".")
		if len(path) < 2 || path[0] != r.ID {
			return "", false
		}
		var v any = obj
		for _, f := range path[1:] {
			m, ok := v.(map[string]any)
			if !ok {
				return "", false
			}
			if v, ok = m[f]; !ok {
				return "", false
			}
		}
		return graph.FormatValue(v, operandWidth), true
	}
}

// operandWidth bounds an operand's value, as the engine bounds those
// the check read.
const operandWidth = 120

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
	val := operands(r)
	for _, o := range c.Operands {
		name := o.Path[strings.LastIndex(o.Path, ".")+1:]
		v, ok := val(o)
		if !ok {
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
