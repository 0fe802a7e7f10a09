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

// AppendBounded keeps the newest lines, and never changes what an older
// slice (a snapshot's) shows.
func TestAppendBoundedKeepsOldViews(t *testing.T) {
	var log []LogLine
	var views [][]LogLine
	for i := range InstanceLogLimit + 50 {
		log = AppendBounded(log, LogLine{Message: string(rune('a' + i%26)), Level: "info"})
		views = append(views, log)
	}
	if len(log) != InstanceLogLimit || log[len(log)-1].Message != string(rune('a'+(InstanceLogLimit+49)%26)) {
		t.Fatalf("len %d, last %q", len(log), log[len(log)-1].Message)
	}
	for i, v := range views {
		n := min(i+1, InstanceLogLimit)
		if len(v) != n {
			t.Fatalf("view %d has %d lines, want %d", i, len(v), n)
		}
		first := max(i+1-InstanceLogLimit, 0)
		for j, l := range v {
			if want := string(rune('a' + (first+j)%26)); l.Message != want {
				t.Fatalf("view %d line %d = %q, want %q: an older view was changed", i, j, l.Message, want)
			}
		}
	}
}
