package graph

import (
	"regexp"
	"strings"
	"testing"
)

// TestLimitMessageLeadsWithCause: a failure of a very long expression
// (here 12,000 characters) gives a message of a few hundred characters
// whose cause comes before the expression, and the expression is named by
// its start and a hash, so an Event (cut at about 1 KB) carries the cause.
func TestLimitMessageLeadsWithCause(t *testing.T) {
	pad := strings.Repeat("x", 12000)
	expr := "cel.bind(pad, '" + pad + "', lists.range(1000000).map(i, lists.range(1000).map(j, i * j)).size() > size(pad))"
	g := readyGraph(t, DefaultLimits, expr)
	_, _, err := g.Resources["cm"].IsReady(map[string]any{})
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	if len(msg) > 400 {
		t.Errorf("message is %d characters, want at most 400: %.200s…", len(msg), msg)
	}
	cause := strings.Index(msg, "CEL cost limit of 1000000")
	start := strings.Index(msg, "${cel.bind(pad, 'xxxx")
	if cause < 0 || start < 0 || cause > start {
		t.Errorf("message %q: want the cause, then the expression's start", msg)
	}
	if !strings.HasPrefix(msg, "resource cm field readyWhen[0]: stopped:") {
		t.Errorf("message %q does not lead with resource, field and cause", msg)
	}
	if !regexp.MustCompile(`…\} \(sha256 [0-9a-f]{8}\)\)$`).MatchString(msg) {
		t.Errorf("message %q does not end with the shortened expression and its hash", msg)
	}
}

// TestExpressionRef: short expressions are quoted whole; long ones by
// their start (cut on a character boundary) and a hash that tells apart
// expressions with the same start.
func TestExpressionRef(t *testing.T) {
	if got := ExpressionRef("a.b == 1"); got != "${a.b == 1}" {
		t.Errorf("short: %q", got)
	}
	long1 := strings.Repeat("é", 100) + " == 1"
	long2 := strings.Repeat("é", 100) + " == 2"
	r1, r2 := ExpressionRef(long1), ExpressionRef(long2)
	if r1 == r2 {
		t.Errorf("same reference %q for different expressions", r1)
	}
	want := "${" + strings.Repeat("é", 40) + "…} (sha256 "
	if !strings.HasPrefix(r1, want) || len(r1) > 120 {
		t.Errorf("long: %q, want a prefix %q", r1, want)
	}
}
