package e2e

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/test/graphs"
)

// Two engines on one cluster: exactly one writes, the other observes and
// shows who holds the lease, and takes over when the first exits.
func TestEngineLeaseOneWriter(t *testing.T) {
	r := newEngRig(t)
	rgd := r.writeFile("rgd.yaml", graphs.Chain("englease", "EngLease"))
	withLease := func(id string) func(*engine.Options) {
		return func(o *engine.Options) {
			o.RGDPaths = []string{rgd}
			o.DisableLease = false
			o.LeaseNamespace = r.ns
			o.LeaseName = "kroscope-test"
			o.LeaseDuration = 3 * time.Second
			o.Identity = id
		}
	}
	a := r.start(withLease("engine-a"))
	a.waitFor(time.Minute, "engine a holding the lease", func(s *state.Snapshot) bool { return s.Mode.Reconciling })
	gvr := a.graphServed("englease")
	b := r.start(withLease("engine-b"))
	b.graphServed("englease")
	b.waitFor(time.Minute, "engine b observing engine a", func(s *state.Snapshot) bool {
		return !s.Mode.Reconciling && s.Mode.Holder == "engine-a"
	})

	for i := range 3 {
		r.createInstance(gvr, "EngLease", fmt.Sprintf("l%d", i), nil)
	}
	res := gvr.Resource + "." + gvr.Group
	a.allInState(res, 3, reconciler.InstanceStateActive, 2*time.Minute)
	b.allInState(res, 3, reconciler.InstanceStateActive, 2*time.Minute)
	t.Logf("while a holds the lease: a wrote %d times, b %d times (b sent %d requests)", a.Writes(), b.Writes(), b.Requests())
	if b.Writes() != 0 {
		t.Fatalf("the observing engine wrote %d times", b.Writes())
	}
	if a.Writes() == 0 {
		t.Fatalf("the lease holder wrote nothing")
	}
	if err := b.e.Delete(context.Background(), state.InstanceKey{Resource: res, Namespace: r.ns, Name: "l0"}); err == nil || !strings.Contains(err.Error(), "engine-a") {
		t.Errorf("Delete while observing: err = %v, want one naming the holder", err)
	}

	// a exits (releasing the lease): b takes over and reconciles new work.
	stopped := time.Now()
	if err := a.stop(); err != nil {
		t.Fatal(err)
	}
	// Released before Run returned: a process exits right after, and a
	// lease it still held would keep b waiting for its whole duration.
	l, err := r.env.Kubernetes().CoordinationV1().Leases(r.ns).Get(context.Background(), "kroscope-test", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h := l.Spec.HolderIdentity; h != nil && *h == "engine-a" {
		t.Fatalf("engine a's Run returned still holding the lease (renewed %v)", l.Spec.RenewTime)
	}
	b.waitFor(time.Minute, "engine b holding the lease", func(s *state.Snapshot) bool { return s.Mode.Reconciling && s.Mode.Holder == "engine-b" })
	t.Logf("engine b took over %s after engine a stopped", time.Since(stopped).Round(time.Millisecond))
	r.createInstance(gvr, "EngLease", "after", nil)
	b.allInState(res, 4, reconciler.InstanceStateActive, 2*time.Minute)
	if b.Writes() == 0 {
		t.Errorf("engine b holds the lease but wrote nothing")
	}
}

// --observe makes zero writes: counted on the engine's own connection.
func TestEngineObserveMakesNoWrites(t *testing.T) {
	r := newEngRig(t)
	rgd := r.writeFile("rgd.yaml", graphs.Chain("engobserve", "EngObserve"))
	// A writing engine installs the CRD and converges one instance.
	first := r.start(func(o *engine.Options) { o.RGDPaths = []string{rgd} })
	gvr := first.graphServed("engobserve")
	res := gvr.Resource + "." + gvr.Group
	r.createInstance(gvr, "EngObserve", "done", nil)
	first.allInState(res, 1, reconciler.InstanceStateActive, time.Minute)
	if err := first.stop(); err != nil {
		t.Fatal(err)
	}
	r.createInstance(gvr, "EngObserve", "untouched", nil)

	obs := r.start(func(o *engine.Options) {
		o.RGDPaths = []string{rgd}
		o.Observe = true
		o.DisableLease = false // --observe never campaigns either
		o.LeaseNamespace = r.ns
		o.RequeueInterval = time.Second
	})
	obs.graphServed("engobserve")
	snap := obs.waitFor(time.Minute, "both instances observed", func(s *state.Snapshot) bool {
		done := s.Instance(state.InstanceKey{Resource: res, Namespace: r.ns, Name: "done"})
		un := s.Instance(state.InstanceKey{Resource: res, Namespace: r.ns, Name: "untouched"})
		return done != nil && done.State == reconciler.InstanceStateActive && un != nil && un.State != "" && un.Reconciles >= 3
	})
	if !snap.Mode.Forced || snap.Mode.Reconciling {
		t.Errorf("mode = %+v, want forced observing", snap.Mode)
	}
	un := snap.Instance(state.InstanceKey{Resource: res, Namespace: r.ns, Name: "untouched"})
	t.Logf("observed the unreconciled instance as %s: %s", un.State, un.Message)
	if un.State == reconciler.InstanceStateActive {
		t.Errorf("an instance nobody reconciled is reported ACTIVE")
	}
	if err := obs.e.Delete(context.Background(), un.Key); err == nil || !strings.Contains(err.Error(), "--observe") {
		t.Errorf("Delete in observe mode: err = %v", err)
	}
	if n := obs.Writes(); n != 0 {
		t.Fatalf("--observe sent %d write requests", n)
	}
	t.Logf("--observe: %d requests, 0 writes", obs.Requests())
}

// The lease holder is SIGKILLed (no release): the observing engine takes
// over once the lease expires.
func TestEngineLeaseTakeoverAfterSIGKILL(t *testing.T) {
	r := newEngRig(t)
	rgd := r.writeFile("rgd.yaml", graphs.Chain("engleasekill", "EngLeaseKill"))
	child := r.startChild(kubeconfig(t, r.cfg), rgd, "KROSCOPE_ENGINE_CHILD_LEASE_IDENTITY=engine-child")
	// The child must hold the lease before b starts.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		l, err := r.env.Kubernetes().CoordinationV1().Leases(r.ns).Get(context.Background(), "kroscope-test", metav1.GetOptions{})
		if err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity == "engine-child" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child never took the lease (last error %v)", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	b := r.start(func(o *engine.Options) {
		o.RGDPaths = []string{rgd}
		o.DisableLease = false
		o.LeaseNamespace = r.ns
		o.LeaseName = "kroscope-test"
		o.LeaseDuration = 3 * time.Second
		o.Identity = "engine-b"
	})
	b.waitFor(2*time.Minute, "engine b observing the child", func(s *state.Snapshot) bool {
		return !s.Mode.Reconciling && s.Mode.Holder == "engine-child"
	})
	gvr := b.graphServed("engleasekill")
	r.createInstance(gvr, "EngLeaseKill", "k", nil)
	res := gvr.Resource + "." + gvr.Group
	b.allInState(res, 1, reconciler.InstanceStateActive, 2*time.Minute)
	if b.Writes() != 0 {
		t.Fatalf("the observing engine wrote %d times", b.Writes())
	}
	killed := time.Now()
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	b.waitFor(time.Minute, "engine b holding the lease", func(s *state.Snapshot) bool { return s.Mode.Reconciling })
	t.Logf("engine b took over %s after the holder was SIGKILLed (lease duration 3s)", time.Since(killed).Round(time.Millisecond))
	r.createInstance(gvr, "EngLeaseKill", "k2", nil)
	b.allInState(res, 2, reconciler.InstanceStateActive, 2*time.Minute)
}

// The lease holder gets SIGTERM: by the time its process has exited, the
// lease is released, so the next holder need not wait out its duration.
func TestEngineLeaseReleasedOnSIGTERM(t *testing.T) {
	r := newEngRig(t)
	rgd := r.writeFile("rgd.yaml", graphs.Chain("engleaseterm", "EngLeaseTerm"))
	child := r.startChild(kubeconfig(t, r.cfg), rgd, "KROSCOPE_ENGINE_CHILD_LEASE_IDENTITY=engine-child")
	leases := r.env.Kubernetes().CoordinationV1().Leases(r.ns)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		l, err := leases.Get(context.Background(), "kroscope-test", metav1.GetOptions{})
		if err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity == "engine-child" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child never took the lease (last error %v)", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := child.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if _, err := child.Process.Wait(); err != nil {
		t.Fatal(err)
	}
	l, err := leases.Get(context.Background(), "kroscope-test", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h := l.Spec.HolderIdentity; h != nil && *h == "engine-child" {
		t.Fatalf("the process exited on SIGTERM still holding the lease (renewed %v)", l.Spec.RenewTime)
	}
}
