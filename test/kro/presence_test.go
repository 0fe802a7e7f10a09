package kro

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/krodetect"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/test/engrun"
	"github.com/kroscope/kroscope/test/graphs"
	"github.com/kroscope/kroscope/test/krocontroller"
)

// waitNoHeldKroLease waits until no kro Lease on the shared test API
// server is held: a Lease an earlier test's kro left held (kro does not
// release it on SIGTERM) would, until it expires, make this test's writes
// look like that leader's, which its expiry then proves stopped.
func (r *kroRig) waitNoHeldKroLease() {
	r.t.Helper()
	kube := r.env.Kubernetes()
	r.poll(time.Minute, "earlier tests' kro Leases to expire", func() (bool, string) {
		list, err := kube.CoordinationV1().Leases(metav1.NamespaceAll).List(ctxT(r.t), metav1.ListOptions{FieldSelector: "metadata.name=" + krodetect.LeaseName})
		if err != nil {
			return false, err.Error()
		}
		for _, l := range list.Items {
			s := l.Spec
			if s.HolderIdentity != nil && *s.HolderIdentity != "" && s.RenewTime != nil && s.LeaseDurationSeconds != nil &&
				s.RenewTime.Add(time.Duration(*s.LeaseDurationSeconds)*time.Second).After(time.Now()) {
				return false, l.Namespace + " held by " + *s.HolderIdentity
			}
		}
		return true, ""
	})
}

// TestKroWithoutLeaseNeverFought is issue #26's second item: kro's real
// controller run as a plain process with its default flags (no leader
// election, so no Lease; no Deployment) reconciles a graph and an
// instance; a default (writing) kroscope started beside it observes. The
// instance and the graph are then deleted while kro runs, and kro stays
// idle for two minutes: kroscope must make no write at all, its own Lease
// included, and never say it may reconcile (it did at once before: the
// evidence went with the objects). Then kro is stopped and a new graph
// stored: kro leaves it unanswered, which after KroSilence proves kro
// gone, and kroscope reconciles, having changed its mind once.
func TestKroWithoutLeaseNeverFought(t *testing.T) {
	r := newKroRigWithout(t)
	env := r.env
	r.waitNoHeldKroLease()
	r.kro = krocontroller.New(t, env.Config, krocontroller.Options{})
	r.kro.Start()

	rgd := r.storeGraphYAML(graphs.Chain("kroplain", "KroPlain"))
	live := r.waitGraphs([]string{rgd.GetName()}, nil)[rgd.GetName()]
	crd := r.instanceCRD(live)
	gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: crd.Spec.Versions[0].Name, Resource: crd.Spec.Names.Plural}
	r.createInstance(gvr, "KroPlain", "one")
	r.waitKroActive(gvr, "one")

	ownLease := "kroscope-plain"
	silence := 45 * time.Second // well above how long kro takes to answer, even on a busy machine
	run := engrun.Start(t, r.engineConfig(80), func(o *engine.Options) {
		o.WatchClusterRGDs = true
		o.DisableLease = false // as `kroscope` runs by default
		o.LeaseNamespace, o.LeaseName, o.Identity = r.ns, ownLease, "kroscope-plain"
		o.KroPollInterval = 300 * time.Millisecond
		o.KroSilence = silence
	})
	run.Until(time.Minute, "kroscope to see kro and serve its graph", func(s *state.Snapshot) (bool, string) {
		g := graphNamed(s, rgd.GetName())
		return s.Mode.Kro != "" && g != nil && g.Served, ""
	})

	// The reproduction: the instance and the graph deleted while kro runs
	// (kro removes its finalizers), then kro idle.
	r.deleteAndWait(gvr, r.ns, "one", r.ns)
	r.deleteAndWait(graph.GroupVersionResource, "", rgd.GetName(), "")
	idle := time.Now()
	for time.Since(idle) < 2*time.Minute+10*time.Second {
		if s := run.E.Snapshot(); s.Mode.Reconciling || s.Mode.Kro == "" {
			t.Fatalf("%s after the deletions kroscope may write beside the running kro: mode %+v", time.Since(idle).Round(time.Second), s.Mode)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if !r.kro.Running() {
		t.Fatal("kro's controller exited: the test proves nothing")
	}
	t.Logf("kroscope beside an idle kro for %s: %d writes (%d to Leases) %v; header: %s",
		time.Since(idle).Round(time.Second), run.Writes(), run.LeaseWrites(), run.FirstWrites(), run.E.Snapshot().Mode.Kro)
	if run.Writes() != 0 {
		t.Errorf("kroscope made %d writes (%d to Leases) beside kro: %v", run.Writes(), run.LeaseWrites(), run.FirstWrites())
	}
	if _, err := env.Kubernetes().CoordinationV1().Leases(r.ns).Get(context.Background(), ownLease, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("kroscope's Lease exists beside kro (err %v)", err)
	}
	if n := mayReconcileLines(run); n != 0 {
		t.Errorf("kroscope logged %d times that it may reconcile beside kro", n)
	}

	// kro stopped: a graph it leaves unanswered proves it gone.
	r.kro.Stop()
	next := r.storeGraphYAML(graphs.Chain("kroplaingone", "KroPlainGone"))
	stored := time.Now()
	run.Until(silence+time.Minute, "kroscope to prove kro gone and serve the new graph", func(s *state.Snapshot) (bool, string) {
		g := graphNamed(s, next.GetName())
		return s.Mode.Reconciling && g != nil && g.Served, ""
	})
	t.Logf("kroscope reconciling %s after the graph kro left unanswered was stored (silence %s)", time.Since(stored).Round(time.Second), silence)
	if time.Since(stored) < silence {
		t.Errorf("kroscope reconciled %s after the graph was stored, before the %s silence", time.Since(stored), silence)
	}
	if n := mayReconcileLines(run); n != 1 {
		t.Errorf("kroscope changed its mind %d times, want once", n)
	}
}

func mayReconcileLines(run *engrun.Run) int {
	n := 0
	for _, l := range run.E.Snapshot().Logs {
		if strings.Contains(l.Message, "kroscope may reconcile") {
			n++
		}
	}
	return n
}
