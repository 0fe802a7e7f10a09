package reconciler

import (
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/graph"
)

func TestMayWrite(t *testing.T) {
	for _, c := range []struct {
		observe, gateOpen, want bool
	}{
		{observe: false, gateOpen: true, want: true},
		{observe: false, gateOpen: false, want: false},
		{observe: true, gateOpen: true, want: false},
		{observe: true, gateOpen: false, want: false},
	} {
		if got := mayWrite(c.observe, c.gateOpen); got != c.want {
			t.Errorf("mayWrite(observe=%v, gateOpen=%v) = %v, want %v", c.observe, c.gateOpen, got, c.want)
		}
	}
}

// Each reconcile asks the client set's gate, as it is then: a closed gate
// means observing, with no Event recorder (Events are writes).
func TestReconcileAsksTheGate(t *testing.T) {
	set := client.NewSetFromClients(client.Clients{Kubernetes: kubefake.NewSimpleClientset()})
	open := true
	set.GateWrites(func() bool { return open })
	gvr := schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: "tests"}
	c := NewController(logr.Discard(), ReconcileConfig{}, gvr, &graph.Graph{}, set, nil, nil)
	defer c.Close()
	for _, open = range []bool{true, false, true} {
		_, _, writes, rec := c.options()
		if writes != open || (rec != nil) != open {
			t.Errorf("gate open=%v: writes %v, recorder %v", open, writes, rec != nil)
		}
	}
}
