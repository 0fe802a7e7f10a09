package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/test/graphs"
)

// wideGraph has n independent ConfigMaps and a chain of depth 3 on top of
// the first one.
func wideGraph(kind string, n int) string {
	var cms []string
	for i := range n {
		in := "${schema.spec.value}"
		if i > 0 && i <= 3 {
			in = fmt.Sprintf("${cm%d.data.v}", i-1)
		}
		cms = append(cms, graphs.ConfigMap(fmt.Sprintf("cm%d", i), fmt.Sprintf("${schema.metadata.name}-%d", i), "v: "+in))
	}
	return graphs.RGD(strings.ToLower(kind), kind, "spec:\n  value: string | default=x", cms...)
}

// BenchmarkReconcileConverged measures one reconcile of a converged
// 10-resource instance on the real API server (reads only).
func BenchmarkReconcileConverged(b *testing.B) {
	r := newRig(b, wideGraph("RtBenchConverged", 10))
	r.create("apiVersion: kro.run/v1alpha1\nkind: RtBenchConverged\nmetadata:\n  name: app\nspec: {}\n")
	r.untilState("app", reconciler.InstanceStateActive)
	before := countWrites(r)
	b.ResetTimer()
	for b.Loop() {
		if o, err := r.reconcile("app"); err != nil || o.State.State != reconciler.InstanceStateActive {
			b.Fatalf("state %s err %v", o.State.State, err)
		}
	}
	b.ReportMetric(float64(countWrites(r)-before)/float64(b.N), "writes/op")
}

// countWrites counts the controller's write requests, Events excluded (the
// recorder sends them asynchronously, after the state change).
func countWrites(r *rig) int {
	n := 0
	for _, paths := range r.WritesBy() {
		n += len(paths)
	}
	return n
}

// BenchmarkCreateToActive measures a new 10-resource instance (a chain of
// depth 4 inside) from creation to ACTIVE, reconciling back to back.
func BenchmarkCreateToActive(b *testing.B) {
	r := newRig(b, wideGraph("RtBenchCreate", 10))
	reconciles := 0
	i := 0
	for b.Loop() {
		name := fmt.Sprintf("app%d", i)
		i++
		r.create("apiVersion: kro.run/v1alpha1\nkind: RtBenchCreate\nmetadata:\n  name: " + name + "\nspec: {}\n")
		deadline := time.Now().Add(time.Minute)
		for {
			o, _ := r.reconcile(name)
			reconciles++
			if o.State.State == reconciler.InstanceStateActive {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("%s not ACTIVE: %s", name, o.Message)
			}
		}
	}
	b.ReportMetric(float64(reconciles)/float64(b.N), "reconciles/op")
}
