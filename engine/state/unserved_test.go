package state

import "testing"

// TestUnservedInstancesStay: a graph that stops serving its kind keeps
// its instances listed, marked (they are still stored in the cluster);
// once the kind is served again, those not listed again go, and a
// removed graph takes its unserved instances with it.
func TestUnservedInstancesStay(t *testing.T) {
	s := NewStore()
	a := InstanceKey{Resource: "webapps.kro.run", Namespace: "demo", Name: "a"}
	b := InstanceKey{Resource: "webapps.kro.run", Namespace: "demo", Name: "b"}
	other := InstanceKey{Resource: "jobs.kro.run", Namespace: "demo", Name: "c"}
	for _, k := range []InstanceKey{a, b, other} {
		s.UpdateInstance(k, func(in *Instance) { in.Graph, in.State = k.Resource, "ACTIVE" })
	}
	v := s.Version()
	s.Unserve("webapps.kro.run")
	if got := s.Instance(a); got == nil || !got.Unserved || got.State != "ACTIVE" || got.Version <= v {
		t.Fatalf("after Unserve: %+v, want kept, marked, state kept, a new version", got)
	}
	if s.Instance(other).Unserved {
		t.Fatal("Unserve marked another kind's instance")
	}
	// Served again: a is listed again (noted, which clears its mark), b is not.
	s.UpdateInstance(a, func(in *Instance) { in.Unserved = false })
	s.ForgetUnserved("webapps.kro.run")
	if s.Instance(a) == nil || s.Instance(b) != nil || s.Instance(other) == nil {
		t.Fatalf("after ForgetUnserved: a %v, b %v, other %v; want a and other kept, b gone", s.Instance(a), s.Instance(b), s.Instance(other))
	}
	s.Unserve("webapps.kro.run")
	s.RemoveGraph("webapps.kro.run")
	if s.Instance(a) != nil || s.Instance(other) == nil {
		t.Fatal("RemoveGraph kept its unserved instance, or took another graph's")
	}
}
