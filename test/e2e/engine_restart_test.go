package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/test/graphs"
)

// A restart costs nothing (#40): kroscope stopped over converged instances
// and started again (a new process would start the same way: nothing is
// carried over but what the cluster holds) takes the Lease, verifies every
// instance, and writes nothing but the Lease: counted by the API server
// itself and by the engine's own connection. No instance changes state and
// no Event is sent.
func TestEngineRestartOverConvergedInstancesWritesNothing(t *testing.T) {
	const n = 20
	r := newEngRig(t)
	rgd := r.writeFile("rgd.yaml", graphs.Chain("engrestart", "EngRestart"))
	withLease := func(id string) func(*engine.Options) {
		return func(o *engine.Options) {
			o.RGDPaths = []string{rgd}
			o.DisableLease = false
			o.LeaseNamespace = r.ns
			o.LeaseName = "kroscope-restart"
			o.LeaseDuration = 3 * time.Second
			o.Identity = id
		}
	}
	first := r.start(withLease("first"))
	gvr := first.graphServed("engrestart")
	res := gvr.Resource + "." + gvr.Group
	for i := range n {
		r.createInstance(gvr, "EngRestart", fmt.Sprintf("r%d", i), nil)
	}
	first.allInState(res, n, reconciler.InstanceStateActive, 2*time.Minute)
	if err := first.stop(); err != nil {
		t.Fatal(err)
	}

	before := r.env.ServerRequests(t)
	second := r.start(withLease("second"))
	second.waitFor(time.Minute, "the restarted engine holding the lease", func(s *state.Snapshot) bool { return s.Mode.Reconciling })
	// Verified: every instance reconciled by this process, and then a few
	// quiet seconds (nothing queued, no worker busy), so a write the first
	// pass provoked, and its echo, would have shown.
	second.waitFor(2*time.Minute, "every instance verified", func(s *state.Snapshot) bool {
		c := 0
		for _, in := range s.Instances {
			if in.Key.Resource == res && in.Reconciles >= 1 {
				c++
			}
		}
		return c == n
	})
	quietFor(t, second, 3*time.Second)
	after := r.env.ServerRequests(t)

	if w := after.WritesSince(before, "leases"); len(w) > 0 {
		t.Errorf("the API server counted writes after the restart (Leases aside): %v", w)
	}
	if w := second.Writes() - second.LeaseWrites(); w != 0 {
		t.Errorf("the restarted engine sent %d writes besides its Lease; first: %v", w, second.FirstWrites())
	}
	snap := second.E.Snapshot()
	for _, in := range snap.Instances {
		if in.Key.Resource != res {
			continue
		}
		for _, tr := range in.History {
			if tr.To != reconciler.InstanceStateActive {
				t.Errorf("%s went %s -> %s after the restart (%s)", in.Key.Name, tr.From, tr.To, tr.Message)
			}
		}
		if in.State != reconciler.InstanceStateActive {
			t.Errorf("%s is %s after the restart: %s", in.Key.Name, in.State, in.Message)
		}
	}
}

// quietFor waits until the engine has had nothing queued and no worker
// busy for d on end (two minutes at most).
func quietFor(t *testing.T, run *engRun, d time.Duration) {
	t.Helper()
	var since time.Time
	run.waitFor(2*time.Minute, fmt.Sprintf("the engine quiet for %s", d), func(s *state.Snapshot) bool {
		if s.Engine.Busy() {
			since = time.Time{}
			return false
		}
		if since.IsZero() {
			since = time.Now()
		}
		return time.Since(since) >= d
	})
}
