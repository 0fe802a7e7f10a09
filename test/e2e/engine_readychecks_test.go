package e2e

import (
	"testing"
	"time"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/state"
)

const readyChecksRGD = `apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata:
  name: ready-checks
spec:
  schema:
    apiVersion: v1alpha1
    kind: ReadyChecks
    spec:
      ready: string | default=no
  resources:
  - id: cm
    readyWhen:
    - ${cm.metadata.name != ""}
    - ${cm.data.ready == "yes"}
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: ${schema.metadata.name}-cm
      data:
        ready: ${schema.spec.ready}
`

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
