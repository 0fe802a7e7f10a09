package state

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// The snapshot lists every instance once, in key order, each as last
// written, whatever order instances come, change and go in.
func TestSnapshotKeepsKeyOrder(t *testing.T) {
	s := NewStore()
	want := map[InstanceKey]string{}
	r := rand.New(rand.NewPCG(1, 2))
	key := func() InstanceKey {
		return InstanceKey{Resource: fmt.Sprintf("r%d.kro.run", r.IntN(2)), Namespace: fmt.Sprintf("ns%d", r.IntN(3)), Name: fmt.Sprintf("i%d", r.IntN(40))}
	}
	for step := range 2000 {
		k := key()
		switch op := r.IntN(4); {
		case op == 0:
			s.RemoveInstance(k)
			delete(want, k)
		case op == 1:
			msg := fmt.Sprint(step)
			if s.UpdateExisting(k, func(in *Instance) { in.Message = msg }) {
				want[k] = msg
			}
		default:
			msg := fmt.Sprint(step)
			s.UpdateInstance(k, func(in *Instance) { in.Message = msg })
			want[k] = msg
		}
		if step%97 != 0 && step != 1999 {
			continue
		}
		snap := s.Snapshot()
		keys := make([]InstanceKey, 0, len(want))
		for k := range want {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b InstanceKey) int { return a.Compare(b) })
		if len(snap.Instances) != len(keys) {
			t.Fatalf("step %d: %d instances, want %d", step, len(snap.Instances), len(keys))
		}
		for i, in := range snap.Instances {
			if in.Key != keys[i] || in.Message != want[keys[i]] {
				t.Fatalf("step %d: row %d is %v %q, want %v %q", step, i, in.Key, in.Message, keys[i], want[keys[i]])
			}
		}
	}
}

// A snapshot of an empty store lists no instances, as a list, not nil
// (-o json prints [], not null).
func TestSnapshotOfNoInstances(t *testing.T) {
	if got := NewStore().Snapshot().Instances; got == nil || len(got) != 0 {
		t.Fatalf("instances %#v", got)
	}
}

// BenchmarkSnapshotWhileInstancesChange: 10,000 instances, one changes
// (or, one time in ten, a new one comes) between two snapshots, as while
// they converge with the TUI drawing each change.
func BenchmarkSnapshotWhileInstancesChange(b *testing.B) {
	s := NewStore()
	s.SetGraph(Graph{Name: "a", Resource: "a.kro.run", Served: true})
	for i := range 10000 {
		s.UpdateInstance(InstanceKey{Resource: "a.kro.run", Namespace: "ns", Name: fmt.Sprint(i)}, func(in *Instance) { in.State = "IN_PROGRESS" })
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		name := fmt.Sprint(i % 10000)
		if i%10 == 0 {
			name = fmt.Sprint("new-", i)
		}
		s.UpdateInstance(InstanceKey{Resource: "a.kro.run", Namespace: "ns", Name: name}, func(in *Instance) { in.State = "ACTIVE" })
		_ = s.Snapshot()
	}
}
