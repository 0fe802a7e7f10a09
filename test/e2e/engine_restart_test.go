package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/graphs"
)

// restartN is how many converged instances the restart tests start over.
const restartN = 20

// A restart costs nothing (#40): kroscope stopped over converged instances
// and started again (a new process starts the same way: nothing is carried
// over but what the cluster holds) takes the Lease, verifies every
// instance, and writes nothing but the Lease: counted by the API server
// itself and by the engine's own connection. No instance changes state and
// no Event is sent.
func TestEngineRestartOverConvergedInstancesWritesNothing(t *testing.T) {
	r := newEngRig(t)
	rgd := r.writeFile("rgd.yaml", graphs.Chain("engrestart", "EngRestart"))
	opts := r.restartOptions(func(o *engine.Options) { o.RGDPaths = []string{rgd} })
	first := r.start(opts("first"))
	res := r.convergeChain(first, "engrestart", "EngRestart")
	if err := first.stop(); err != nil {
		t.Fatal(err)
	}
	r.quietStart(res, func() *engRun { return r.start(opts("second")) })
}

// The same for a graph stored in the cluster, whose status kroscope
// writes: a restart leaves the RGD's status as it stands.
func TestEngineRestartOverClusterGraphWritesNothing(t *testing.T) {
	r := newEngRig(t)
	installKroCRDsForEngine(t, r)
	r.clusterRGD(graphs.Chain("engrestartrgd", "EngRestartRgd"))
	opts := r.restartOptions(func(o *engine.Options) { o.WatchClusterRGDs = true })
	first := r.start(opts("first"))
	res := r.convergeChain(first, "engrestartrgd", "EngRestartRgd")
	r.waitRGD("engrestartrgd", "its status written", time.Minute, func(u *unstructured.Unstructured) bool {
		s, _, _ := unstructured.NestedString(u.Object, "status", "state")
		return s == "Active"
	})
	if err := first.stop(); err != nil {
		t.Fatal(err)
	}
	r.quietStart(res, func() *engRun { return r.start(opts("second")) })
}

// A graph applied again unchanged stores nothing new (a label of the RGD:
// a new resourceVersion, the same graph) and costs no write; one whose
// spec changed without changing what it makes (here the spacing of an
// expression) restarts its controller, which verifies every instance and
// writes nothing but the RGD's status (its observedGeneration).
func TestEngineGraphReappliedUnchangedWritesNothing(t *testing.T) {
	r := newEngRig(t)
	installKroCRDsForEngine(t, r)
	r.clusterRGD(graphs.Chain("engreapply", "EngReapply"))
	run := r.start(r.restartOptions(func(o *engine.Options) { o.WatchClusterRGDs = true })("only"))
	res := r.convergeChain(run, "engreapply", "EngReapply")
	quietFor(t, run, 2*time.Second)
	rgds := r.dyn.Resource(graph.GroupVersionResource)

	before := r.env.ServerRequests(t)
	run.Reset()
	patch := []byte(`{"metadata":{"labels":{"reapplied":"yes"}}}`)
	if _, err := rgds.Patch(context.Background(), "engreapply", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	quietFor(t, run, 3*time.Second)
	r.noWritesSince(run, before, res, "resourcegraphdefinitions") // the label patch is the test's

	before = r.env.ServerRequests(t)
	run.Reset()
	// A new controller counts its instances' reconciles from zero: the
	// engine's count goes on.
	reconciles := run.E.Snapshot().Engine.Reconciles
	u, err := rgds.Get(context.Background(), "engreapply", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res0, _, _ := unstructured.NestedSlice(u.Object, "spec", "resources")
	tmpl := res0[0].(map[string]any)["template"].(map[string]any)
	_ = unstructured.SetNestedField(tmpl, "${ schema.metadata.name }-a", "metadata", "name")
	_ = unstructured.SetNestedSlice(u.Object, res0, "spec", "resources")
	if _, err := rgds.Update(context.Background(), u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	run.waitFor(time.Minute, "every instance verified by the new controller", func(s *state.Snapshot) bool {
		return s.Engine.Reconciles >= reconciles+restartN
	})
	quietFor(t, run, 3*time.Second)
	// The update is the test's; the status write (the new generation) the
	// engine's, and its only one.
	r.noWritesSince(run, before, res, "resourcegraphdefinitions")
	if w := run.Writes() - run.LeaseWrites(); w > 1 {
		t.Errorf("the engine wrote %d times; want at most the RGD's status", w)
	}
}

// A standby that observed the holder takes the Lease when the holder
// leaves (the in-cluster Deployment's rolling update): it verifies every
// instance and writes nothing but the Lease.
func TestEngineStandbyTakesOverQuietly(t *testing.T) {
	r := newEngRig(t)
	rgd := r.writeFile("rgd.yaml", graphs.Chain("engstandby", "EngStandby"))
	opts := r.restartOptions(func(o *engine.Options) { o.RGDPaths = []string{rgd} })
	first := r.start(opts("first"))
	res := r.convergeChain(first, "engstandby", "EngStandby")
	standby := r.start(opts("standby"))
	standby.waitFor(time.Minute, "the standby observing every instance", func(s *state.Snapshot) bool {
		return !s.Mode.Reconciling && s.Mode.Holder == "first" && totalReconciles(s, res) >= restartN
	})
	before := r.env.ServerRequests(t)
	standby.Reset()
	if err := first.stop(); err != nil {
		t.Fatal(err)
	}
	standby.waitFor(time.Minute, "the standby holding the lease", func(s *state.Snapshot) bool { return s.Mode.Reconciling })
	r.verifiedQuietly(standby, before, res)
}

// restartOptions are the restart tests' engine options for an identity:
// one Lease, a short duration, plus mod.
func (r *engRig) restartOptions(mod func(*engine.Options)) func(id string) func(*engine.Options) {
	return func(id string) func(*engine.Options) {
		return func(o *engine.Options) {
			o.DisableLease = false
			o.LeaseNamespace = r.ns
			o.LeaseName = "kroscope-restart"
			o.LeaseDuration = 3 * time.Second
			o.Identity = id
			mod(o)
		}
	}
}

// convergeChain creates restartN instances of a chain graph run serves and
// waits until all are ACTIVE; it returns their resource.
func (r *engRig) convergeChain(run *engRun, name, kind string) string {
	r.t.Helper()
	gvr := run.graphServed(name)
	res := gvr.Resource + "." + gvr.Group
	for i := range restartN {
		r.createInstance(gvr, kind, fmt.Sprintf("r%d", i), nil)
	}
	run.allInState(res, restartN, reconciler.InstanceStateActive, 2*time.Minute)
	return res
}

// quietStart starts an engine over converged instances and checks it
// verifies them all quietly.
func (r *engRig) quietStart(res string, start func() *engRun) {
	r.t.Helper()
	before := r.env.ServerRequests(r.t)
	run := start()
	run.waitFor(time.Minute, "the new engine holding the lease", func(s *state.Snapshot) bool { return s.Mode.Reconciling })
	r.verifiedQuietly(run, before, res)
}

// verifiedQuietly waits until run has reconciled every instance of res
// and then been quiet a while, and checks that nothing but the Lease was
// written since before (at the API server and on run's connection) and
// that no instance changed state.
func (r *engRig) verifiedQuietly(run *engRun, before envtest.ServerRequests, res string) {
	r.t.Helper()
	run.waitFor(2*time.Minute, "every instance verified", func(s *state.Snapshot) bool {
		c := 0
		for _, in := range s.Instances {
			if in.Key.Resource == res && in.Reconciles >= 1 {
				c++
			}
		}
		return c == restartN
	})
	quietFor(r.t, run, 3*time.Second)
	r.noWritesSince(run, before, res)
}

// noWritesSince checks that the API server counted no write since before
// (Leases, access reviews and the resources skip names aside), that run
// sent none besides its Lease, and that every instance of res stayed
// ACTIVE with no transition.
func (r *engRig) noWritesSince(run *engRun, before envtest.ServerRequests, res string, skip ...string) {
	r.t.Helper()
	if w := r.env.ServerRequests(r.t).WritesSince(before, append(skip, "leases")...); len(w) > 0 {
		r.t.Errorf("the API server counted writes (Leases aside): %v", w)
	}
	if w := run.Writes() - run.LeaseWrites() - rgdStatusWrites(run, skip); w != 0 {
		r.t.Errorf("the engine sent %d writes besides its Lease; first: %v", w, run.FirstWrites())
	}
	for _, in := range run.E.Snapshot().Instances {
		if in.Key.Resource != res {
			continue
		}
		for _, tr := range in.History {
			if tr.To != reconciler.InstanceStateActive {
				r.t.Errorf("%s went %s -> %s (%s)", in.Key.Name, tr.From, tr.To, tr.Message)
			}
		}
		if in.State != reconciler.InstanceStateActive {
			r.t.Errorf("%s is %s: %s", in.Key.Name, in.State, in.Message)
		}
	}
}

func totalReconciles(s *state.Snapshot, res string) int64 {
	var n int64
	for _, in := range s.Instances {
		if in.Key.Resource == res {
			n += in.Reconciles
		}
	}
	return n
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

// rgdStatusWrites counts run's writes of RGD status when skip allows
// them (noWritesSince's callers that expect one).
func rgdStatusWrites(run *engRun, skip []string) int64 {
	if !slices.Contains(skip, "resourcegraphdefinitions") {
		return 0
	}
	var n int64
	for _, p := range run.WritesBy()[""] {
		if strings.HasSuffix(p, "/status") && strings.Contains(p, "/resourcegraphdefinitions/") {
			n++
		}
	}
	return n
}
