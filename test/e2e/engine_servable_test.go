package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/state"
)

// engCostlyGraph is a graph `kroscope validate` rejects: its readyWhen
// costs more than the CEL cost limit for any instance, whatever its data.
const engCostlyGraph = `apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata:
  name: engcostly
spec:
  schema:
    apiVersion: v1alpha1
    kind: EngCostly
  resources:
  - id: cm
    readyWhen:
    - ${lists.range(1000000).map(i, lists.range(1000).map(j, i * j)).size() > 0}
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: ${schema.metadata.name}-cm
`

// TestEngineServesWhatValidateAccepts: the engine asks validate's question
// (graph.Builder.Servable) before serving a graph: a graph validate rejects
// is not served, and its state says why, with the limit's flag.
func TestEngineServesWhatValidateAccepts(t *testing.T) {
	r := newEngRig(t)
	path := r.writeFile("costly.yaml", engCostlyGraph)
	run := r.start(func(o *engine.Options) { o.RGDPaths = []string{path} })
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
}
