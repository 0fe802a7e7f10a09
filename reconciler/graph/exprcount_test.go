package graph

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// manyExpressionsRGD is one ConfigMap whose data holds n distinct
// expressions, the shape of a hostile graph that stays under the file-size
// limit (110,000 expressions take about 4 MB).
func manyExpressionsRGD(n int) *ResourceGraphDefinition {
	data := make(map[string]any, n)
	for i := range n {
		data[fmt.Sprintf("k%d", i)] = fmt.Sprintf("${schema.spec.name + '-%d'}", i)
	}
	return &ResourceGraphDefinition{
		Name: "many", Source: "bench",
		Spec: Spec{
			Schema: Schema{APIVersion: "v1alpha1", Kind: "Many", Spec: map[string]any{"name": "string"}},
			Resources: []ResourceSpec{{ID: "cm", Template: map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": "${schema.spec.name}"},
				"data":     data,
			}}},
		},
	}
}

// benchValidate times what `kroscope validate` does with one graph of n
// expressions: build it and estimate its costs.
func benchValidate(b *testing.B, n int) {
	rgd := manyExpressionsRGD(n)
	bld := NewBuilder()
	start := cpuTime()
	for b.Loop() {
		g, err := bld.Build(rgd)
		if err == nil {
			EstimateCosts(g, DefaultLimits)
		}
	}
	b.ReportMetric(float64((cpuTime()-start).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// BenchmarkValidateAtLimit is the largest graph accepted (MaxExpressions).
func BenchmarkValidateAtLimit(b *testing.B) { benchValidate(b, MaxExpressions-1) }

// BenchmarkValidate110k is the hostile graph of issue #26 (39.7 s before
// MaxExpressions; refused at once since).
func BenchmarkValidate110k(b *testing.B) { benchValidate(b, 110_000) }

// TestTooManyExpressions: a graph over MaxExpressions is refused with one
// error naming the limit, before any expression is compiled; one at the
// limit builds.
func TestTooManyExpressions(t *testing.T) {
	// The template's name is one more expression.
	if _, err := NewBuilder().Build(manyExpressionsRGD(MaxExpressions - 1)); err != nil {
		t.Fatalf("a graph of %d expressions: %v", MaxExpressions, err)
	}
	_, err := NewBuilder().Build(manyExpressionsRGD(110_000))
	var errs Errors
	if !errors.As(err, &errs) || len(errs) != 1 {
		t.Fatalf("a graph of 110,001 expressions: want one error, got %v", err)
	}
	want := "many: spec: the graph holds 110001 expressions: at most 10000 are allowed"
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error = %q, want it to start with %q", err, want)
	}
}

func TestCountExpressions(t *testing.T) {
	rgds, err := Parse([]byte(evalRGD), "eval.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// status 3, deployment: name, labels, replicas, note (2), literal,
	// readyWhen; service: name, selector, includeWhen.
	if got := countExpressions(rgds[0]); got != 13 {
		t.Errorf("countExpressions(evalRGD) = %d, want 13", got)
	}
}
