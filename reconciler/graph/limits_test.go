package graph

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kroscope/kroscope/test/graphs"
	"github.com/kroscope/kroscope/test/kroexamples"
)

// buildRuntime builds testdata/runtime/name.yaml with opts.
func buildRuntime(t *testing.T, name string, opts ...Option) *Graph {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "runtime", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return buildOne(t, string(data), opts...)
}

// within runs f and fails the test when it takes longer than d (the
// evaluation is left running: on the code without limits it never ends).
func within(t *testing.T, d time.Duration, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("still evaluating after %v: the evaluation is not bounded", d)
		return nil
	}
}

// TestAdversarialReadyWhenStopsAtCostLimit: expressions whose cost is
// astronomical (a 10^9-element comprehension, a string doubled forty
// times) end quickly with an error naming the expression, the limit and
// the flag, and memory stays bounded.
func TestAdversarialReadyWhenStopsAtCostLimit(t *testing.T) {
	for _, name := range []string{"exponential-readywhen", "string-doubling"} {
		t.Run(name, func(t *testing.T) {
			g := buildRuntime(t, name)
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			err := within(t, 10*time.Second, func() error {
				_, _, err := g.Resources["cm"].IsReady(map[string]any{})
				return err
			})
			var le *LimitError
			if !errors.As(err, &le) || le.Limit != "cost" {
				t.Fatalf("want a cost LimitError, got %v", err)
			}
			for _, want := range []string{"resource cm field readyWhen[0]", "${", "CEL cost limit of 1000000", "--cel-cost-limit"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 512<<20 {
				t.Errorf("evaluation allocated %d MiB before it was stopped", grew>>20)
			}
		})
	}
}

// TestEvaluationDeadline: with the cost limit out of the way, the time
// limit stops the same expression and says so.
func TestEvaluationDeadline(t *testing.T) {
	g := buildRuntime(t, "exponential-readywhen", WithLimits(Limits{Cost: math.MaxUint64, Timeout: 20 * time.Millisecond}))
	start := time.Now()
	err := within(t, 10*time.Second, func() error {
		_, _, err := g.Resources["cm"].IsReady(map[string]any{})
		return err
	})
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != "time" {
		t.Fatalf("want a time LimitError, got %v", err)
	}
	if !strings.Contains(err.Error(), "CEL time limit of 20ms (raise it with --cel-timeout)") {
		t.Errorf("error %q does not name the limit and its flag", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("stopped after %v, the limit is 20ms", took)
	}
}

// TestForEachSizeCheckedBeforeTheListIsBuilt: an instance asking for
// billions of items, or merely more than a collection may have, gets an
// error naming the dimension, quickly and without building the list.
func TestForEachSizeCheckedBeforeTheListIsBuilt(t *testing.T) {
	g := buildRuntime(t, "foreach-huge-count")
	cases := map[int64]string{
		2_000_000_000: "exceeds maximum allowed",
		999_999:       "CEL cost limit of 1000000",
		5000:          "the list has 5000 elements: a collection has at most 1000 items",
	}
	for count, want := range cases {
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		vars := Vars{SchemaIdentifier: map[string]any{"spec": map[string]any{"count": count}}}
		err := within(t, 10*time.Second, func() error {
			_, err := g.Resources["cms"].RenderCollection(vars)
			return err
		})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "forEach[0].i") {
			t.Errorf("count %d: error %v, want one naming forEach[0].i and %q", count, err, want)
		}
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 256<<20 {
			t.Errorf("count %d: allocated %d MiB", count, grew>>20)
		}
	}
	// Within the cap the collection renders.
	objs, err := g.Resources["cms"].RenderCollection(Vars{SchemaIdentifier: map[string]any{"spec": map[string]any{"count": int64(3)}}})
	if err != nil || len(objs) != 3 {
		t.Fatalf("count 3: %d objects, %v", len(objs), err)
	}
}

// TestEstimateCostsRejectsExpensiveGraphs: validate's static estimate
// rejects the exponential graphs, naming resource, field, expression and
// flag; a size read from an input (lists.range(schema.spec.count)) has no
// static bound and is left to the run-time limits.
func TestEstimateCostsRejectsExpensiveGraphs(t *testing.T) {
	for _, name := range []string{"exponential-readywhen", "string-doubling"} {
		errs, large := EstimateCosts(buildRuntime(t, name), DefaultLimits)
		if len(errs) != 1 || len(large) != 0 {
			t.Fatalf("%s: %d errors, want 1: %v; large: %v", name, len(errs), errs, large)
		}
		for _, want := range []string{name + ": resource cm: readyWhen[0]: ${", "exceeds the limit of 1000000 even with inputs of one element", "--cel-cost-limit"} {
			if !strings.Contains(errs.Error(), want) {
				t.Errorf("%s: %q lacks %q", name, errs, want)
			}
		}
		if errs, large := EstimateCosts(buildRuntime(t, name), Limits{Cost: 1 << 50}); len(errs)+len(large) != 0 {
			t.Errorf("%s: rejected under a raised limit: %v %v", name, errs, large)
		}
	}
	if errs, large := EstimateCosts(buildRuntime(t, "foreach-huge-count"), DefaultLimits); len(errs)+len(large) != 0 {
		t.Errorf("foreach-huge-count: %v %v", errs, large)
	}
}

// TestEstimateCostsLargeOnlyForLargeInputs: an expression that is costly
// only when its inputs are large (a map over a list of lists, as kro's
// examples have) is reported as large, not rejected; one whose constants
// make it costly is rejected.
func TestEstimateCostsLargeOnlyForLargeInputs(t *testing.T) {
	g, err := tryBuild(t, costGraph(map[string]string{
		"nested":   "${schema.spec.groups.map(g, g.name + ': ' + g.members.map(m, m.name).join(', ')).join(';')}",
		"constant": "${lists.range(1000000).map(i, lists.range(1000).map(j, i * j)).size() > 0 ? 'y' : 'n'}",
		"cheap":    "${schema.spec.groups.map(g, g.name).join(',')}",
	}))
	if err != nil {
		t.Fatal(err)
	}
	rejected, large := EstimateCosts(g, DefaultLimits)
	if len(rejected) != 1 || !strings.Contains(rejected.Error(), "data.constant") {
		t.Errorf("rejected: %v, want data.constant alone", rejected)
	}
	if len(large) != 1 || !strings.Contains(large.Error(), "data.nested") ||
		!strings.Contains(large.Error(), "when its inputs have 1000 elements or characters") || !strings.Contains(large.Error(), "maxItems") {
		t.Errorf("large: %v, want data.nested alone, naming the assumed size and the fix", large)
	}
}

// TestEstimateCostsStringConversions: a conversion to string has a bounded
// length, so a name built with one gets an estimate, not "unbounded" (cel-go
// gives such results no size: 'a' + string(1) was estimated at 2^64/10,
// and three of them added up past the unbounded mark).
func TestEstimateCostsStringConversions(t *testing.T) {
	exprs := map[string]string{
		"one":   "${'a' + string(1)}",
		"three": "${'a' + string(1) + string(true) + string(2.5)}",
		"input": "${schema.metadata.name + '-' + string(schema.spec.count + 1)}",
		"time":  "${'t' + string(timestamp('2026-01-01T00:00:00Z')) + string(duration('1m'))}",
	}
	g, err := tryBuild(t, costGraph(exprs))
	if err != nil {
		t.Fatal(err)
	}
	// With a limit of 1 every expression is over it: each message carries
	// its estimate, which must be a real, small one.
	rejected, large := EstimateCosts(g, Limits{Cost: 1})
	var all Errors
	for _, e := range append(rejected, large...) {
		if strings.HasPrefix(e.Path, "data.") {
			all = append(all, e)
		}
	}
	if len(all) != len(exprs) {
		t.Fatalf("%d reports for %d expressions: %v", len(all), len(exprs), all)
	}
	for _, e := range all {
		var cost uint64
		msg := e.Message
		if _, err := fmt.Sscanf(msg[strings.Index(msg, "CEL cost ")+len("CEL cost "):], "%d", &cost); err != nil || cost > 1000 {
			t.Errorf("%s: estimate %d (%v), want a small bound", msg, cost, err)
		}
	}
}

// costGraph is a graph whose one ConfigMap's data holds exprs.
func costGraph(exprs map[string]string) string {
	var data strings.Builder
	for _, k := range slices.Sorted(maps.Keys(exprs)) {
		fmt.Fprintf(&data, "%s: %q\n", k, exprs[k])
	}
	return graphs.RGD("costs", "Costs", `types:
  Member:
    name: string
  Group:
    name: string
    members: "[]Member"
spec:
  count: integer
  groups: "[]Group"`, graphs.ConfigMap("cm", "${schema.metadata.name}", data.String()))
}

// TestEstimateCostsAcceptsKroExamples: no example graph, kro's or
// kroscope's, is rejected by the estimate (inputs of unknown size count as
// UnknownInputSize).
func TestEstimateCostsAcceptsKroExamples(t *testing.T) {
	files := append(kroexamples.RGDFiles(t), mustGlob(t, "../../examples/*/*.yaml")...)
	for _, file := range files {
		rgds, err := LoadFiles(file)
		if err != nil {
			continue
		}
		for _, rgd := range rgds {
			g, err := NewBuilder().Build(rgd)
			if err != nil {
				continue
			}
			// The runaway example too: only an instance's data trips the
			// run-time limit it shows.
			if errs, _ := EstimateCosts(g, DefaultLimits); len(errs) != 0 {
				t.Errorf("%s: %v", file, errs)
			}
		}
	}
}

func mustGlob(t *testing.T, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// plantedToken is the value the secret tests plant in a Secret.
const plantedToken = "s3cr3t-T0KEN-4242"

// TestErrorsNeverCarryASecretValue: every way an expression can fail on a
// Secret's value (returning its data as a condition, converting it, reading
// it through another resource's field, iterating over it) gives an error
// that names the expression and the type, never the value.
func TestErrorsNeverCarryASecretValue(t *testing.T) {
	g := buildRuntime(t, "secret-leaks")
	secret := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "creds"},
		"data": map[string]any{"token": plantedToken}}
	copyCM := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "copy"},
		"data": map[string]any{"token": plantedToken}}
	vars := Vars{SchemaIdentifier: map[string]any{"metadata": map[string]any{"name": "x"}}, "creds": secret, "copy": copyCM}
	madeObj := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "made"},
		"data": map[string]any{"token": plantedToken}}
	var errs []error
	// readyWhen returning the Secret's data, then converting its value.
	_, _, err := g.Resources["made"].IsReady(madeObj)
	errs = append(errs, err)
	r := *g.Resources["made"]
	r.ReadyWhen = r.ReadyWhen[1:]
	_, _, err = r.IsReady(madeObj)
	errs = append(errs, err)
	// A template converting it.
	_, err = g.Resources["convert"].Render(vars)
	errs = append(errs, err)
	// A ConfigMap that copied it.
	_, _, err = g.Resources["copy"].IsReady(copyCM)
	errs = append(errs, err)
	// Iterating over it.
	_, err = g.Resources["perKey"].RenderCollection(vars)
	errs = append(errs, err)
	for i, err := range errs {
		if err == nil {
			t.Errorf("case %d: no error", i)
			continue
		}
		if strings.Contains(err.Error(), plantedToken) {
			t.Errorf("case %d: the error carries the Secret's value: %v", i, err)
		}
		if !strings.Contains(err.Error(), "${") {
			t.Errorf("case %d: the error does not name the expression: %v", i, err)
		}
		t.Logf("case %d: %v", i, err)
	}
	for _, e := range []*Expression{g.Resources["copy"].Fields[0].Expressions[0], g.Resources["copy"].ReadyWhen[0], g.Resources["perKey"].ForEach[0].Expression} {
		if !e.Sensitive() {
			t.Errorf("${%s} is not marked as reading a Secret", e.Source)
		}
	}
}

// TestTimeLimitConfirmedBySecondEvaluation: an evaluation starved of CPU
// past the time limit (the meter's clock jumps an hour once) is evaluated
// again and succeeds; only a second trip is the limit's error (#38: a
// loaded machine made `a == b` exceed 100ms, an ERROR for a pass).
func TestTimeLimitConfirmedBySecondEvaluation(t *testing.T) {
	rgds, err := Parse([]byte(`apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata: {name: starved}
spec:
  schema: {apiVersion: v1alpha1, kind: Starved, spec: {}}
  resources:
  - id: cm
    readyWhen: ["${cm.data.a == cm.data.b}"]
    template: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm}, data: {a: x, b: x}}
`), "starved.yaml")
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewBuilder().Build(rgds[0])
	if err != nil {
		t.Fatal(err)
	}
	cm := map[string]any{"data": map[string]any{"a": "x", "b": "x"}}
	starve := func(jumps int) {
		base, n := time.Now(), 0
		clock = func() time.Time {
			n++
			if n%2 == 0 && n/2 <= jumps { // each evaluation's check, not its start
				return base.Add(time.Hour)
			}
			return base
		}
	}
	t.Cleanup(func() { clock = time.Now })

	starve(1)
	if ready, _, err := g.Resources["cm"].IsReady(cm); err != nil || !ready {
		t.Fatalf("starved once: ready %v, %v; want ready", ready, err)
	}
	starve(2)
	_, _, err = g.Resources["cm"].IsReady(cm)
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != "time" {
		t.Fatalf("starved twice: %v, want a time LimitError", err)
	}
}
