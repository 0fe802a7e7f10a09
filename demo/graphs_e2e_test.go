package demo

import (
	"strings"
	"testing"
	"time"

	"github.com/kroscope/kroscope/engine/state"
)

// The demo's graphs reach the state with what the graphs screen shows:
// the template graph, the schema summary, the definition's YAML, scope,
// state, kroscope's conditions and the instance counts; the engine lists
// each RGD's Events without error.
func TestDemoGraphsCarryTheirFacts(t *testing.T) {
	_, e := startDemo(t, 2, "broken", "fanout", "runaway", "webapp")
	var graphs []state.Graph
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		graphs = e.Snapshot().Graphs
		if ready(graphs) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the demo's graphs never all served with instances: %+v", graphs)
		}
	}
	for _, g := range graphs {
		st := g.Status
		if g.Template == nil || len(g.Template.Layers) == 0 || len(g.Template.Schema.Spec) == 0 {
			t.Errorf("%s: no template graph or schema: %+v", g.Name, g.Template)
		}
		if g.Definition == nil || !strings.Contains(g.Definition.YAML, "kind: ResourceGraphDefinition") || g.Definition.UID == "" {
			t.Errorf("%s: no definition: %+v", g.Name, g.Definition)
		}
		if st.State != state.GraphActive || st.By != state.ByKroscope || st.Scope != "Namespaced" || st.Reason != "" {
			t.Errorf("%s: status %+v", g.Name, st)
		}
		if len(st.Conditions) != 5 || st.Conditions[4].Type != "Ready" || st.Conditions[4].Status != "True" {
			t.Errorf("%s: conditions %+v", g.Name, st.Conditions)
		}
		if _, err := e.GraphEvents(t.Context(), g.Name); err != nil {
			t.Errorf("%s: Events: %v", g.Name, err)
		}
	}
}

// ready: every graph is served and has instances.
func ready(graphs []state.Graph) bool {
	for _, g := range graphs {
		if !g.Served || g.Status.Total == 0 {
			return false
		}
	}
	return len(graphs) == 4
}
