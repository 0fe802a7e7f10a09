package state

import (
	"fmt"
	"testing"

	"github.com/kroscope/kroscope/reconciler/graph/graphview"
)

func TestDeriveGraph(t *testing.T) {
	own := []Condition{{Type: "Ready", Status: "True"}}
	kroConds := []Condition{{Type: "Ready", Status: "False", Reason: "Failed"}}
	kroActive := &KroGraph{State: "Active", Conditions: kroConds}
	kroBlocked := &KroGraph{State: "Inactive", Blocked: "KindReady: breaking change", Conditions: kroConds}
	built := &graphview.Summary{Scope: "Cluster"}
	for _, c := range []struct {
		name        string
		g           Graph
		reconciling bool
		want        GraphStatus
	}{
		{"served", Graph{Served: true, Template: built}, true,
			GraphStatus{State: "Active", By: "kroscope", Scope: "Cluster", Conditions: own}},
		{"invalid", Graph{Err: "resource x: bad", Definition: &GraphDefinition{}}, true,
			GraphStatus{State: "Inactive", By: "kroscope", Reason: "resource x: bad", Scope: "Namespaced", Conditions: own}},
		{"starting", Graph{Definition: &GraphDefinition{Scope: "Cluster"}}, true,
			GraphStatus{State: "Inactive", By: "kroscope", Reason: "starting: building the graph and its instance CRD", Scope: "Cluster", Conditions: own}},
		{"unreadable", Graph{Err: "malformed"}, false,
			GraphStatus{State: "Inactive", By: "kroscope", Reason: "malformed", Conditions: own}},
		{"kro's view while observing", Graph{Served: true, Kro: kroBlocked}, false,
			GraphStatus{State: "Inactive", By: "kro", Reason: "KindReady: breaking change", Conditions: kroConds}},
		{"kro active while observing", Graph{Served: true, Kro: kroActive}, false,
			GraphStatus{State: "Active", By: "kro", Conditions: kroConds}},
		{"kro without a reason", Graph{Kro: &KroGraph{}}, false,
			GraphStatus{By: "kro", Reason: "kro reports the graph without a state"}},
		{"kroscope's own while reconciling", Graph{Served: true, Kro: kroBlocked}, true,
			GraphStatus{State: "Active", By: "kroscope", Conditions: own}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := DeriveGraph(&c.g, own, c.reconciling)
			if got.State != c.want.State || got.By != c.want.By || got.Reason != c.want.Reason || got.Scope != c.want.Scope ||
				len(got.Conditions) != len(c.want.Conditions) || (len(got.Conditions) > 0 && got.Conditions[0] != c.want.Conditions[0]) {
				t.Errorf("got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// TestSnapshotCountsInstancesPerGraph: each graph's instances are counted
// by state in the snapshot, and kroscope's conditions reach it.
func TestSnapshotCountsInstancesPerGraph(t *testing.T) {
	s := NewStore()
	s.SetGraph(Graph{Name: "web", Resource: "webapps.kro.run", Served: true})
	s.SetGraph(Graph{Name: "db", Resource: "dbs.kro.run", Err: "bad"})
	s.SetGraphConditions("web", []Condition{{Type: "Ready", Status: "True"}})
	for i, st := range []string{"ACTIVE", "ACTIVE", "ERROR", ""} {
		s.UpdateInstance(InstanceKey{Resource: "webapps.kro.run", Namespace: "a", Name: string(rune('a' + i))}, func(in *Instance) { in.State = st })
	}
	snap := s.Snapshot()
	db, web := snap.Graphs[0].Status, snap.Graphs[1].Status
	if web.Total != 4 || web.Instances["ACTIVE"] != 2 || web.Instances["ERROR"] != 1 || web.Instances[""] != 1 {
		t.Errorf("web counts %+v", web)
	}
	if db.Total != 0 || db.State != "Inactive" || db.Reason != "bad" {
		t.Errorf("db %+v", db)
	}
	if len(web.Conditions) != 1 || web.Conditions[0].Type != "Ready" {
		t.Errorf("web conditions %+v", web.Conditions)
	}
	s.RemoveGraph("web")
	s.SetGraph(Graph{Name: "web", Resource: "webapps.kro.run"})
	if c := s.Snapshot().Graphs[1].Status.Conditions; c != nil {
		t.Errorf("a removed graph's conditions must go with it: %+v", c)
	}
}

// TestSetKroComparesConditions: kro's view with the same conditions is no
// change; other conditions are.
func TestSetKroComparesConditions(t *testing.T) {
	s := NewStore()
	s.SetGraph(Graph{Name: "web"})
	conds := []Condition{{Type: "Ready", Status: "True"}}
	s.SetKro("web", &KroGraph{State: "Active", Conditions: conds})
	v := s.Version()
	s.SetKro("web", &KroGraph{State: "Active", Conditions: []Condition{{Type: "Ready", Status: "True"}}})
	if s.Version() != v {
		t.Error("the same conditions again must not count as a change")
	}
	s.SetKro("web", &KroGraph{State: "Active", Conditions: []Condition{{Type: "Ready", Status: "False"}}})
	if s.Version() == v {
		t.Error("changed conditions must count as a change")
	}
}

// BenchmarkSnapshotGraphs is a snapshot of 10,000 instances of 4 graphs
// after one change: the per-graph counts are part of every snapshot.
func BenchmarkSnapshotGraphs(b *testing.B) {
	s := NewStore()
	for g := range 4 {
		s.SetGraph(Graph{Name: string(rune('a' + g)), Resource: string(rune('a'+g)) + ".kro.run", Served: true})
	}
	for i := range 10000 {
		s.UpdateInstance(InstanceKey{Resource: string(rune('a'+i%4)) + ".kro.run", Namespace: "ns", Name: fmt.Sprint(i)}, func(in *Instance) { in.State = "ACTIVE" })
	}
	b.ResetTimer()
	for i := range b.N {
		s.SetEngine(Engine{Reconciles: int64(i)})
		_ = s.Snapshot()
	}
}
