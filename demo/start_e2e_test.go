package demo

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// The demo starts, and takes an edit, without a false ERROR (#38: every
// start showed "Deployment demo/orders-transform was created on 7 passes
// in a row", and blog's replicas 2 -> 5 "Deployment demo/blog was created
// on 6 passes in a row", though nothing was ever recreated). Every state
// the engine publishes is looked at, until webapp's and fanout's
// instances are ACTIVE, then again after the edit until blog's five
// replicas are available.
func TestDemoStartsWithoutFalseErrors(t *testing.T) {
	d, e := startDemo(t, 0, "webapp", "fanout")
	n := len(d.Instances())
	watchStates(t, e, "the start", func() bool { return countActive(e) == n })

	webapps := schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: "webapps"}
	if _, err := d.Cluster.Dynamic().Resource(webapps).Namespace(Namespace).Patch(t.Context(), "blog", types.MergePatchType,
		[]byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	watchStates(t, e, "blog's replicas 2 -> 5", func() bool {
		u, err := d.Cluster.Dynamic().Resource(deployments).Namespace(Namespace).Get(t.Context(), "blog", metav1.GetOptions{})
		if err != nil {
			return false
		}
		available := u.Object["status"].(map[string]any)["availableReplicas"]
		return fmt.Sprint(available) == "5" && countActive(e) == n
	})
}
