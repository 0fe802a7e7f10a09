package onewriter

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/test/engrun"
	"github.com/kroscope/kroscope/test/graphs"
)

// A TUI about to become the cluster's writer with the user's credentials
// (the Lease free, no kro) asks first: until the user's yes nothing at all
// is written, not even the Lease (counted by the API server and by the
// engine's own connection); the header's question names the user; after
// the yes it takes the Lease and reconciles.
func TestNothingWrittenBeforeTheUsersYes(t *testing.T) {
	r := newRig(t)
	// The instance CRD exists (a writer installed it before): an asking
	// kroscope serves the graph without writing it.
	path := r.writeFile("rgd.yaml", graphs.Chain("consent", "Consent"))
	gvr := schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: "consents"}
	first := engrun.Start(t, engrun.Config{Rest: r.env.Config, Namespace: r.ns}, func(o *engine.Options) { o.RGDPaths = []string{path} })
	eventually(t, 2*time.Minute, "the CRD installed", func() bool { return r.instances(gvr) != nil && first.E.Snapshot().Mode.Reconciling })
	if err := first.Stop(); err != nil {
		t.Fatal(err)
	}
	r.createInstances(gvr, "Consent", "c", 3)

	start := time.Now()
	run := engrun.Start(t, engrun.Config{Rest: r.cfgAs("jane"), Namespace: r.ns}, func(o *engine.Options) {
		o.RGDPaths = []string{path}
		o.DisableLease = false
		o.LeaseNamespace, o.LeaseName = r.ns, "kroscope"
		o.AskBeforeWriting, o.CampaignIfFree = true, true
	})
	eventually(t, 2*time.Minute, "the question on the header and the instances seen", func() bool {
		s := run.E.Snapshot()
		return s.Mode.Ask != "" && len(s.Instances) == 3
	})
	time.Sleep(3 * time.Second) // workers, watches and resyncs have had their chance to write
	s := run.E.Snapshot()
	if !strings.Contains(s.Mode.Ask, "as jane") || s.Mode.Reconciling {
		t.Errorf("mode while asking: %+v", s.Mode)
	}
	if n := run.Writes(); n != 0 {
		t.Errorf("the engine sent %d writes before the user's yes: %v", n, run.FirstWrites())
	}
	if w := r.writesBy("jane", start); len(w) != 0 {
		t.Errorf("the API server saw %d writes by jane before her yes (first: %s %s/%s)", len(w), w[0].Resource, w[0].Namespace, w[0].Name)
	}
	if r.leaseHolder(r.ns, "kroscope") != "" {
		t.Error("the Lease was taken before the user's yes")
	}

	run.E.Consent()
	eventually(t, time.Minute, "reconciling after the yes", func() bool { return run.E.Snapshot().Mode.Reconciling })
	r.setValue(gvr, "two")
	eventually(t, 2*time.Minute, "the change reconciled as jane", func() bool { return r.converged(gvr, 3, "two") })
	if r.leaseHolder(r.ns, "kroscope") == "" || len(r.writesBy("jane", start)) == 0 {
		t.Error("after the yes: no Lease held or nothing written as jane")
	}
}
