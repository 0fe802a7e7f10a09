package tui

import (
	"strings"
	"testing"

	"github.com/kroscope/kroscope/engine/state"
)

// While kro's controller reconciles the cluster the header says so, with
// the reason and the way out; the instance header shows kro's view of the
// instance's graph.
func TestKroHeaderLines(t *testing.T) {
	s := fixture()
	s.Mode = state.Mode{Kro: "kro is reconciling this cluster (lease kro-system/controller.kro.run held by kro-1): observing; --take-over to reconcile"}
	s.Graphs = append([]state.Graph(nil), s.Graphs...)
	graph := s.Instances[0].Graph
	for i := range s.Graphs {
		if s.Graphs[i].Name == graph {
			s.Graphs[i].Kro = &state.KroGraph{State: "Active", Revision: 2}
		}
	}
	m, _ := newTestModel(t, s, Options{}, 200, 40)
	out := plain(m.View().Content)
	if !strings.Contains(out, s.Mode.Kro) || !strings.Contains(out, "observing (kro reconciles)") {
		t.Errorf("header does not say kro reconciles:\n%s", out)
	}
	press(m, "enter")
	if out := plain(m.View().Content); !strings.Contains(out, "kro: Active, serving revision 2") {
		t.Errorf("instance header lacks kro's view:\n%s", out)
	}
}
