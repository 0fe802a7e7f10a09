package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/test/graphs"
)

var engOmitGraph = graphs.RGD("engomit", "EngOmit", `spec:
  note: string | default=""`,
	graphs.ConfigMap("cm", "${schema.metadata.name}-cm", `kept: "yes"
note: '${schema.spec.note == "" ? omit() : schema.spec.note}'`))

// TestEngineCELOmitOption: the engine refuses a graph with omit() unless
// Options.CELOmit (--enable-cel-omit) is set, saying which flag enables
// it; with it the graph is served and the omitted field is not written.
func TestEngineCELOmitOption(t *testing.T) {
	r := newEngRig(t)
	path := r.writeFile("omit.yaml", engOmitGraph)

	off := r.start(func(o *engine.Options) { o.RGDPaths = []string{path} })
	snap := off.waitFor(time.Minute, "the graph reported invalid", func(s *state.Snapshot) bool {
		for _, g := range s.Graphs {
			if g.Name == "engomit" && g.Err != "" {
				return true
			}
		}
		return false
	})
	for _, g := range snap.Graphs {
		if g.Name == "engomit" && (g.Served || !strings.Contains(g.Err, "--enable-cel-omit")) {
			t.Errorf("without CELOmit: served=%v err=%q", g.Served, g.Err)
		}
	}
	if err := off.stop(); err != nil {
		t.Fatal(err)
	}

	on := r.start(func(o *engine.Options) { o.RGDPaths = []string{path}; o.CELOmit = true })
	gvr := on.graphServed("engomit")
	r.createInstance(gvr, "EngOmit", "om", nil)
	on.allInState(gvr.Resource+"."+gvr.Group, 1, reconciler.InstanceStateActive, 2*time.Minute)
	cm, err := r.dyn.Resource(gvrConfigMap).Namespace(r.ns).Get(context.Background(), "om-cm", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if data := cm.Object["data"].(map[string]any); data["kept"] != "yes" || data["note"] != nil {
		t.Errorf("data = %v, want kept only", data)
	}
}
