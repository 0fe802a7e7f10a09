package e2e

import (
	"testing"

	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/test/graphs"
)

var quantityGraph = graphs.RGD("rtquantity", "RtQuantity", "spec:\n  cpu: string | default=1000m",
	graphs.Deployment("deploy", "${schema.metadata.name}", `image: nginx
resources:
  requests:
    cpu: ${schema.spec.cpu}
    memory: 1024Mi`))

// The API server stores quantities canonically (1000m as 1, 1024Mi as
// 1Gi). A converged instance whose template spells them otherwise must not
// be re-applied on every reconcile.
func TestReconcilerQuantitiesAreNotDrift(t *testing.T) {
	r := newRig(t, quantityGraph)
	r.create("apiVersion: kro.run/v1alpha1\nkind: RtQuantity\nmetadata:\n  name: app\nspec: {}\n")
	r.untilState("app", reconciler.InstanceStateActive)
	d := r.get(gvrDeployment, r.ns, "app")
	c := d.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	req := c["resources"].(map[string]any)["requests"].(map[string]any)
	if req["cpu"] != "1" || req["memory"] != "1Gi" {
		t.Fatalf("the API server did not normalise the quantities (%v): the test proves nothing", req)
	}
	before := r.Writes()
	for range 5 {
		if _, err := r.reconcile("app"); err != nil {
			t.Fatal(err)
		}
	}
	if n := r.Writes() - before; n != 0 {
		t.Fatalf("%d writes in 5 reconciles of a converged instance", n)
	}
	if got := r.get(gvrDeployment, r.ns, "app").GetResourceVersion(); got != d.GetResourceVersion() {
		t.Fatalf("the Deployment changed: resourceVersion %s -> %s", d.GetResourceVersion(), got)
	}
}
