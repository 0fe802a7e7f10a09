package e2e

import (
	"testing"

	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/test/graphs"
)

// A new instance whose children are ready as created is ACTIVE after the
// pass that created them, its status written once: no second reconcile
// only to read its own writes back.
func TestReconcilerNewInstanceActiveInOnePass(t *testing.T) {
	r := newRig(t, graphs.Chain("rtonepass", "RtOnePass"))
	r.create("apiVersion: kro.run/v1alpha1\nkind: RtOnePass\nmetadata:\n  name: one\nspec: {}\n")
	before := r.Writes()
	o, err := r.reconcile("one")
	if err != nil {
		t.Fatalf("reconcile returned %v, want nil (%s: %s)", err, o.State.State, o.Message)
	}
	if o.State.State != reconciler.InstanceStateActive {
		t.Fatalf("state %s (%s), want ACTIVE", o.State.State, o.Message)
	}
	for id, d := range o.Resources {
		if d.State != reconciler.ResourceStateSynced {
			t.Errorf("%s: %s, want SYNCED", id, d.State)
		}
	}
	if st, _ := r.instance("one").Object["status"].(map[string]any); st["state"] != "ACTIVE" {
		t.Errorf("written status %v, want ACTIVE", st)
	}
	// The labels and finalizer, three applies and one status write.
	if got := r.Writes() - before; got != 5 {
		t.Errorf("%d writes, want 5", got)
	}
}
