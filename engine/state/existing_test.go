package state

import "testing"

// A late write for an instance the store no longer holds must not bring
// it back (its row would return after the API server removed it).
func TestUpdateExistingNeverCreates(t *testing.T) {
	s := NewStore()
	k := InstanceKey{Resource: "webapps.kro.run", Namespace: "demo", Name: "flaky"}
	if s.UpdateExisting(k, func(in *Instance) { in.State = "DELETING" }) || s.Instance(k) != nil {
		t.Fatal("UpdateExisting created an instance")
	}
	s.UpdateInstance(k, func(in *Instance) { in.State = "ACTIVE" })
	if !s.UpdateExisting(k, func(in *Instance) { in.State = "DELETING" }) || s.Instance(k).State != "DELETING" {
		t.Fatalf("UpdateExisting did not update: %+v", s.Instance(k))
	}
	if h := s.Instance(k).History; len(h) != 2 || h[1].To != "DELETING" {
		t.Fatalf("history: %+v", h)
	}
}
