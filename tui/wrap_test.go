package tui

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// wrap is the TUI's one wrapping function (inspector, errors, help,
// dialogs): at every width it keeps every token, and no line is wider
// than asked. The inspector once showed `capacity` / `schema` for
// `capacity / schema`: the expression read wrong.
func TestWrapKeepsEveryToken(t *testing.T) {
	squeeze := func(s string) string { return strings.Join(strings.Fields(ansi.Strip(s)), "") }
	check := func(s string, w int) {
		t.Helper()
		lines := wrap(s, w)
		if got := squeeze(strings.Join(lines, " ")); got != squeeze(s) {
			t.Fatalf("wrap(%q, %d) lost text: %q", s, w, lines)
		}
		for _, l := range lines {
			if lw := ansi.StringWidth(l); lw > w {
				t.Fatalf("wrap(%q, %d): line %q is %d wide", s, w, l, lw)
			}
		}
	}
	expr := "resource quota field data.PER_SHARD: division by zero (in ${string(schema.spec.capacity / schema.spec.shards)})"
	for w := 1; w <= 120; w++ {
		check(expr, w)
		check("\x1b[31m✗\x1b[0m evaluating "+expr+"  \x1b[31mis false\x1b[0m", w)
	}
	tokens := []string{"a", "bb", "/", " / ", "ccc, ", "dddddddddddd", "  ", "x/y", "${f(a / b)}", ", ", "--observe", "é", "界"}
	r := rand.New(rand.NewSource(27))
	for range 20000 {
		var b strings.Builder
		for range r.Intn(14) + 1 {
			b.WriteString(tokens[r.Intn(len(tokens))])
		}
		check(b.String(), r.Intn(20)+2)
	}
}

// The inspector shows the whole expression at every width: squeezed of
// its spaces, the screen holds it in one piece.
func TestInspectorKeepsTheExpression(t *testing.T) {
	for w := 60; w < sideBySide; w++ {
		m, _ := newTestModel(t, dividing(), Options{}, w, 40)
		press(m, "j", "j", "enter", "j", "j")
		out := strings.Join(strings.Fields(plain(m.View().Content)), "")
		if !strings.Contains(out, "${string(schema.spec.capacity/schema.spec.shards)})") {
			t.Fatalf("at %d columns the inspector lost part of the expression:\n%s", w, plain(m.View().Content))
		}
	}
}
