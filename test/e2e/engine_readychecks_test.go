package e2e

import (
	"testing"
	"time"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/test/graphs"
)

var readyChecksRGD = graphs.RGD("ready-checks", "ReadyChecks", "spec:\n  ready: string | default=no",
	graphs.ConfigMap("cm", "${schema.metadata.name}-cm", "ready: ${schema.spec.ready}",
		"readyWhen:\n- ${cm.metadata.name != \"\"}\n- ${cm.data.ready == \"yes\"}"))

// A resource waiting on a two-condition readyWhen reaches the state with
// both conditions judged and the values read from the object the API
// server returned.
func TestEngineReadyChecksCarryOperandValues(t *testing.T) {
	rig := newEngRig(t)
	rig.writeFile("ready.yaml", readyChecksRGD)
	run := rig.start(func(o *engine.Options) { o.RGDPaths = []string{rig.dir} })
	gvr := run.graphServed("ready-checks")
	rig.createInstance(gvr, "ReadyChecks", "wait", nil)
	var checks []state.ReadyCheck
	run.waitFor(time.Minute, "the readyWhen checks", func(s *state.Snapshot) bool {
		for _, in := range s.Instances {
			if r := in.Resource("cm"); in.Key.Name == "wait" && r != nil && len(r.ReadyChecks) == 2 {
				checks = r.ReadyChecks
				return true
			}
		}
		return false
	})
	if !checks[0].OK || checks[0].Operands[0].Path != "cm.metadata.name" || checks[0].Operands[0].Value != `"wait-cm"` {
		t.Fatalf("first check: %+v", checks[0])
	}
	if checks[1].OK || checks[1].Result != "false" || len(checks[1].Operands) != 1 ||
		checks[1].Operands[0].Path != "cm.data.ready" || checks[1].Operands[0].Value != `"no"` {
		t.Fatalf("second check: %+v", checks[1])
	}
}
