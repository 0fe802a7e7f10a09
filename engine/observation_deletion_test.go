package engine

import (
	"testing"
	"time"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/graph"
)

// A child excluded by includeWhen (or never rendered) is not DELETED when
// its instance is: nothing was. One that was there is, and keeps its name
// through the deletion instead of showing "(not rendered)".
func TestDeletionRowsTellTheTruth(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	g := &graph.Graph{TopologicalOrder: []string{"web", "ingress", "late"}, Resources: map[string]*graph.Resource{
		"web": {ID: "web"}, "ingress": {ID: "ingress"}, "late": {ID: "late"},
	}}
	prev := &state.Instance{Resources: []state.Resource{
		{ID: "web", Name: "shop", Namespace: "demo", State: reconciler.ResourceStatePendingDeletion, FirstApplied: now.Add(-time.Minute)},
		{ID: "ingress", State: reconciler.ResourceStateSkipped},
		{ID: "late", Name: "shop-late", Namespace: "demo", State: reconciler.ResourceStatePendingDeletion},
	}}
	o := reconciler.Observation{Resources: map[string]*reconciler.ResourceDetail{
		"web":     {ID: "web", State: reconciler.ResourceStateDeleted},
		"ingress": {ID: "ingress", State: reconciler.ResourceStateDeleted},
		"late":    {ID: "late", State: reconciler.ResourceStateDeleted},
	}}
	got := map[string]state.Resource{}
	for _, r := range resources(g, o, prev, now, nil) {
		got[r.ID] = r
	}
	if r := got["web"]; r.State != reconciler.ResourceStateDeleted || r.Name != "shop" {
		t.Errorf("web = %s %q, want DELETED shop", r.State, r.Name)
	}
	if r := got["late"]; r.State != reconciler.ResourceStateDeleted || r.Name != "shop-late" {
		t.Errorf("late (seen waiting for deletion) = %s %q, want DELETED shop-late", r.State, r.Name)
	}
	if r := got["ingress"]; r.State != reconciler.ResourceStateSkipped {
		t.Errorf("ingress (excluded, never created) = %s, want SKIPPED", r.State)
	}
}
