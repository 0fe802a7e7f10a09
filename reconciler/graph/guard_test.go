package graph

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"
)

// readyGraph builds a graph whose resource cm has exprs as readyWhen.
func readyGraph(t *testing.T, l Limits, exprs ...string) *Graph {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: kro.run/v1alpha1\nkind: ResourceGraphDefinition\nmetadata: {name: guard}\nspec:\n" +
		"  schema: {apiVersion: v1alpha1, kind: Guard, spec: {n: integer | default=1}}\n" +
		"  resources:\n  - id: cm\n    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm}}\n    readyWhen:\n")
	for _, e := range exprs {
		q, _ := json.Marshal("${" + e + "}")
		fmt.Fprintf(&b, "    - %s\n", q)
	}
	return buildOne(t, b.String(), WithLimits(l))
}

// doubled wraps body in bindings s0..sn, where s_k is 'x' doubled k times
// (2^k characters).
func doubled(n int, body string) string {
	var b strings.Builder
	b.WriteString("cel.bind(s0, 'x', ")
	for k := 1; k <= n; k++ {
		fmt.Fprintf(&b, "cel.bind(s%d, s%d + s%d, ", k, k-1, k-1)
	}
	b.WriteString(body)
	b.WriteString(strings.Repeat(")", n+1))
	return b.String()
}

// unlimited are limits that the size bound must hold without: no cost
// limit to speak of, an hour's deadline.
var unlimited = Limits{Cost: math.MaxUint64, Timeout: time.Hour}

// TestSizeLimitHoldsWhateverTheOtherLimits: with the cost limit raised
// out of the way, each expression that would build tens of MiB (or, for
// the 2^40 doubling, the terabyte that took the process down) is stopped
// by the fixed size bound, names it, and allocates little. Each shape is
// one way to make a big value from small ones: doubling, one amplifying
// call (replace, join, format, JSON, split, flatten), many medium
// values, a shared tree serialized, a list concatenated with itself.
func TestSizeLimitHoldsWhateverTheOtherLimits(t *testing.T) {
	cases := map[string]string{
		"doubling to 2^40":        doubled(40, "size(s40) > 0"),
		"replace between runes":   doubled(13, "s13.replace('', s13).size() > 0"),
		"join":                    doubled(13, "lists.range(10000).map(i, s13).join('').size() > 0"),
		"format":                  doubled(13, "'%s'.format([lists.range(10000).map(i, s13)]).size() > 0"),
		"json.marshal":            doubled(13, "json.marshal(lists.range(10000).map(i, s13)).size() > 0"),
		"split":                   doubled(22, "s22.split('').size() > 0"),
		"flatten":                 "cel.bind(r, lists.range(1000), lists.range(3000).map(i, r).flatten().size() > 0)",
		"many distinct strings":   doubled(20, "lists.range(100).map(i, s20 + string(i)).size() > 0"),
		"shared tree serialized":  doubled(13, nested(14, "json.marshal(a14).size() > 0")),
		"concatenated list views": "cel.bind(l0, [1], " + listDoubling(30) + ")",
	}
	for name, expr := range cases {
		t.Run(name, func(t *testing.T) {
			g := readyGraph(t, unlimited, expr)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, _, err := g.Resources["cm"].IsReady(map[string]any{})
			runtime.ReadMemStats(&after)
			var le *LimitError
			if !errors.As(err, &le) || le.Limit != "size" {
				t.Fatalf("want a size LimitError, got %v", err)
			}
			if !strings.Contains(err.Error(), "CEL size limit") || !strings.Contains(err.Error(), "32 MiB") {
				t.Errorf("error %q does not name the size limit", err)
			}
			bound := uint64(3 * MaxEvalBytes)
			if raceEnabled {
				bound *= 3 // the doubling allocated 192 MiB under -race; within 96 without
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > bound {
				t.Errorf("allocated %d MiB before it was stopped", grew>>20)
			}
		})
	}
}

// nested wraps body in bindings a0..an of pairs: a_k holds 2^k copies of
// s13, shared.
func nested(n int, body string) string {
	var b strings.Builder
	b.WriteString("cel.bind(a0, [s13], ")
	for k := 1; k <= n; k++ {
		fmt.Fprintf(&b, "cel.bind(a%d, [a%d, a%d], ", k, k-1, k-1)
	}
	return b.String() + body + strings.Repeat(")", n+1)
}

// listDoubling doubles the list l0 n times by concatenation, then sorts
// the result (a copy of every element).
func listDoubling(n int) string {
	var b strings.Builder
	for k := 1; k <= n; k++ {
		fmt.Fprintf(&b, "cel.bind(l%d, l%d + l%d, ", k, k-1, k-1)
	}
	return b.String() + fmt.Sprintf("l%d.sort().size() > 0", n) + strings.Repeat(")", n)
}

// TestSizeLimitLeavesOrdinaryWorkAlone: values well under the bound,
// and accumulators that grow one entry at a time, evaluate as before.
func TestSizeLimitLeavesOrdinaryWorkAlone(t *testing.T) {
	for _, expr := range []string{
		doubled(20, "size(s20) == 1048576"),
		// Charged per step, these accumulators would count 5000²/2 entries.
		"lists.range(5000).map(i, i * 2).size() == 5000",
		"lists.range(5000).transformMap(i, v, v).size() == 5000",
		doubled(10, "lists.range(1000).map(i, s10).join(',').size() == 1024999"),
		"json.marshal({'a': [1, 2, 3]}) == '{\"a\":[1,2,3]}'",
		"'a-b-c'.split('-') == ['a', 'b', 'c'] && 'aaa'.replace('a', 'bb') == 'bbbbbb'",
	} {
		g := readyGraph(t, unlimited, expr)
		ready, reason, err := g.Resources["cm"].IsReady(map[string]any{})
		if err != nil || !ready {
			t.Errorf("%.80s: ready %v, %q, %v", expr, ready, reason, err)
		}
	}
}

// TestDeadlineInterruptsWorkOutsideComprehensions: cel-go checks its
// deadline only between comprehension steps; an expression with none
// (string work alone) is stopped by the meter's check at each call.
func TestDeadlineInterruptsWorkOutsideComprehensions(t *testing.T) {
	g := readyGraph(t, Limits{Cost: math.MaxUint64, Timeout: time.Nanosecond}, doubled(20, "size(s20) > 0"))
	_, _, err := g.Resources["cm"].IsReady(map[string]any{})
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != "time" {
		t.Fatalf("want a time LimitError, got %v", err)
	}
	if !strings.Contains(err.Error(), "CEL time limit of 1ns (raise it with --cel-timeout)") {
		t.Errorf("error %q does not name the limit and its flag", err)
	}
}

// TestExplainReadyIsBounded: the explanation of a resource that is not
// ready evaluates every readyWhen, including those IsReady did not reach
// (it stops at the first false); they are bounded by the same limits.
func TestExplainReadyIsBounded(t *testing.T) {
	g := readyGraph(t, DefaultLimits, "1 > 2", doubled(27, "size(s27) > 0"))
	checks := g.Resources["cm"].ExplainReady(map[string]any{})
	if len(checks) != 2 {
		t.Fatalf("%d checks, want 2", len(checks))
	}
	// cel-go does not enforce the cost limit on a program that also tracks
	// state (the explanation's): the size bound stops it.
	if checks[0].Result != "false" || !strings.Contains(checks[1].Result, "stopped: the expression exceeded the CEL") {
		t.Errorf("checks: %q, %q; want false, then a limit", checks[0].Result, checks[1].Result)
	}
}
