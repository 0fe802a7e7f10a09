package state

import "testing"

func TestSetKroKeepsGraphAndSummary(t *testing.T) {
	s := NewStore()
	s.SetGraph(Graph{Name: "web", Served: true})
	s.SetKro("web", &KroGraph{State: "Active", Revision: 3})
	v := s.Version()
	s.SetKro("web", &KroGraph{State: "Active", Revision: 3})
	if s.Version() != v {
		t.Error("the same view again must not count as a change")
	}
	s.SetGraph(Graph{Name: "web", Served: true, Err: ""}) // the engine's own update
	g := s.Snapshot().Graphs[0]
	if g.Kro == nil || g.Kro.Summary() != "kro: Active, serving revision 3" {
		t.Fatalf("kro view lost or wrong: %+v", g.Kro)
	}
	s.SetKro("web", &KroGraph{State: "Inactive", Revision: 4, LatestRevision: 5, Blocked: "KindReady: breaking"})
	if got := s.Snapshot().Graphs[0].Kro.Summary(); got != "kro: Inactive, revision 4 verified, latest 5, blocked: KindReady: breaking" {
		t.Errorf("summary %q", got)
	}
	s.RemoveGraph("web")
	s.SetGraph(Graph{Name: "web"})
	if s.Snapshot().Graphs[0].Kro != nil {
		t.Error("a removed graph's kro view must go with it")
	}
}
