package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/kroscope/kroscope/engine/state"
)

const brokenErr = `resource "deployment": spec.replicas: undefined field 'replica' in ${schema.spec.replica}`

// refusedGraph is a snapshot whose only graph, from an --rgd file, the
// engine refused: it never built, so it has no kind and no instances.
func refusedGraph() *state.Snapshot {
	s := fixture()
	s.Instances, s.Watches = nil, nil
	s.Graphs = []state.Graph{{Name: "broken", Source: "examples/broken/rgd.yaml", Err: brokenErr,
		Status: state.GraphStatus{State: state.GraphInactive, By: state.ByKroscope, Reason: brokenErr}}}
	return s
}

// TestInvalidGraphSaysWhy: an invalid --rgd graph left the list saying
// "No instances yet of ." and e finding no error; the list now names the
// graph, its file and the refusal, and e opens the graph's status.
func TestInvalidGraphSaysWhy(t *testing.T) {
	m, _ := newTestModel(t, refusedGraph(), Options{}, 80, 24)
	out := plain(m.Frame())
	golden.RequireEqual(t, out)
	for _, want := range []string{"Graph broken (examples/broken/rgd.yaml) is not served:", "${schema.spec.replica}", "graph broken not served"} {
		if !strings.Contains(out, want) {
			t.Errorf("the list does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "No instances yet of .") {
		t.Errorf("the list names an empty kind:\n%s", out)
	}
	press(m, "e")
	if v := m.shown().Views; len(v) == 0 || v[len(v)-1] != rgdTabStatus.view() {
		t.Errorf("e opened %v, want the graph's status", v)
	}
	if out := plain(m.Frame()); !strings.Contains(out, "graph broken is not served") {
		t.Errorf("e does not say why:\n%s", out)
	}
}
