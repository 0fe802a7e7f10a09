package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/test/graphs"
)

// engCostlyGraph is a graph `kroscope validate` rejects: its readyWhen
// costs more than the CEL cost limit for any instance, whatever its data.
var engCostlyGraph = graphs.RGD("engcostly", "EngCostly", "",
	graphs.ConfigMap("cm", "${schema.metadata.name}-cm", "", "readyWhen:\n- ${lists.range(1000000).map(i, lists.range(1000).map(j, i * j)).size() > 0}"))

// TestEngineServesWhatValidateAccepts: the engine asks validate's question
// (graph.Builder.Servable) before serving a graph: a graph validate rejects
// is not served, and its state says why, with the limit's flag: in the
// engine's state (what the TUI shows) for a graph file, in the RGD's status
// for a cluster graph.
func TestEngineServesWhatValidateAccepts(t *testing.T) {
	r := newEngRig(t)
	installKroCRDsForEngine(t, r)
	path := r.writeFile("costly.yaml", engCostlyGraph)
	r.clusterRGD(strings.NewReplacer("engcostly", "engcostlyrgd", "EngCostly", "EngCostlyRgd").Replace(engCostlyGraph))
	run := r.start(func(o *engine.Options) { o.RGDPaths = []string{path}; o.WatchClusterRGDs = true })
	snap := run.waitFor(time.Minute, "the graph decided", func(s *state.Snapshot) bool {
		for _, g := range s.Graphs {
			if g.Name == "engcostly" && (g.Served || g.Err != "") {
				return true
			}
		}
		return false
	})
	for _, g := range snap.Graphs {
		if g.Name != "engcostly" {
			continue
		}
		if g.Served || !strings.Contains(g.Err, "readyWhen[0]") || !strings.Contains(g.Err, "exceeds the limit of 1000000") || !strings.Contains(g.Err, "--cel-cost-limit") {
			t.Errorf("served=%v err=%q; want not served, naming the field, the limit and its flag", g.Served, g.Err)
		}
	}

	u := r.waitRGD("engcostlyrgd", "GraphAccepted False", time.Minute, func(u *unstructured.Unstructured) bool {
		m := rgdCondition(u, "GraphAccepted")
		return m != nil && m["status"] == "False"
	})
	if m := rgdCondition(u, "GraphAccepted"); m["reason"] != "InvalidResourceGraph" || !strings.Contains(fmt.Sprint(m["message"]), "exceeds the limit of 1000000") {
		t.Errorf("cluster graph: GraphAccepted %v, want InvalidResourceGraph naming the limit", m)
	}
}
