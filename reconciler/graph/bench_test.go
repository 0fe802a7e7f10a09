package graph

import (
	"fmt"
	"syscall"
	"testing"
	"time"
)

// bigRGD is a 100-resource definition: a chain of 50 ConfigMaps, each
// reading the previous one, and a fan-out of 50 Pods reading the chain's
// head and one chain member each, plus includeWhen, readyWhen and status.
func bigRGD() *ResourceGraphDefinition {
	rgd := &ResourceGraphDefinition{
		Name:   "big",
		Source: "bench",
		Spec: Spec{Schema: Schema{
			APIVersion: "v1alpha1",
			Kind:       "Big",
			Spec: map[string]any{
				"name":     "string",
				"replicas": "integer | default=1",
				"enabled":  "boolean | default=true",
			},
			Status: map[string]any{
				"head": "${c0.metadata.name}",
				"tail": "${c49.data.value}",
			},
		}},
	}
	for i := 0; i < 50; i++ {
		name := "${schema.spec.name}-c0"
		data := map[string]any{"value": "${string(schema.spec.replicas)}"}
		if i > 0 {
			name = fmt.Sprintf("${c%d.metadata.name}-%d", i-1, i)
			data = map[string]any{"value": fmt.Sprintf("${c%d.data.value + '-%d'}", i-1, i)}
		}
		rgd.Spec.Resources = append(rgd.Spec.Resources, ResourceSpec{
			ID: fmt.Sprintf("c%d", i),
			Template: map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": name, "labels": map[string]any{"app": "${schema.spec.name}"}},
				"data":     data,
			},
		})
	}
	for i := 0; i < 50; i++ {
		rgd.Spec.Resources = append(rgd.Spec.Resources, ResourceSpec{
			ID: fmt.Sprintf("p%d", i),
			Template: map[string]any{
				"apiVersion": "v1", "kind": "Pod",
				"metadata": map[string]any{"name": fmt.Sprintf("${c0.metadata.name}-p%d", i)},
				"spec": map[string]any{"containers": []any{map[string]any{
					"name":  "main",
					"image": fmt.Sprintf("${c%d.data.value}", i),
					"env":   []any{map[string]any{"name": "N", "value": "${string(size(schema.spec.name))}"}},
				}}},
			},
			IncludeWhen: []string{"${schema.spec.enabled}"},
			ReadyWhen:   []string{fmt.Sprintf("${p%d.status.phase == 'Running'}", i)},
		})
	}
	return rgd
}

func TestBigGraph(t *testing.T) {
	g, err := NewBuilder().Build(bigRGD())
	if err != nil {
		t.Fatal(err)
	}
	if len(g.TopologicalOrder) != 100 || len(g.Layers) != 51 {
		t.Fatalf("order %d, layers %d", len(g.TopologicalOrder), len(g.Layers))
	}
	if g.TopologicalOrder[0] != "c0" || g.TopologicalOrder[1] != "c1" {
		t.Fatalf("order starts %v", g.TopologicalOrder[:3])
	}
}

// BenchmarkBuild100 builds the 100-resource graph (target: under 50ms).
// Besides wall time it reports the process CPU time per build, which a
// busy machine distorts less.
func BenchmarkBuild100(b *testing.B) {
	rgd := bigRGD()
	bld := NewBuilder()
	start := cpuTime()
	for b.Loop() {
		if _, err := bld.Build(rgd); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime()-start).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// BenchmarkRender100 renders every resource of the 100-resource graph once
// (the first run plans the programs). The CEL time limit is wall-clock and
// is raised here: on a busy machine a 100ms deadline can stop an expression
// that takes microseconds, and this measures speed, not the limit.
func BenchmarkRender100(b *testing.B) {
	g, err := NewBuilder(WithLimits(Limits{Timeout: time.Minute})).Build(bigRGD())
	if err != nil {
		b.Fatal(err)
	}
	vars := Vars{"schema": map[string]any{
		"metadata": map[string]any{"name": "x"},
		"spec":     map[string]any{"name": "big", "replicas": int64(2), "enabled": true},
	}}
	for _, id := range g.TopologicalOrder {
		u, err := g.Resources[id].Render(vars)
		if err != nil {
			b.Fatal(err)
		}
		vars[id] = u.Object
	}
	for b.Loop() {
		for _, id := range g.TopologicalOrder {
			if _, err := g.Resources[id].Render(vars); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
