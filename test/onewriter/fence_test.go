package onewriter

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kroscope/kroscope/test/graphs"
)

const instances = 30

// Two kroscopes, one Lease. The holder is frozen (SIGSTOP) right after
// every instance changed, past the Lease's duration; the standby takes the
// Lease and converges the change, and a second change; the old holder is
// continued (SIGCONT) with its queue full and its write gate, as its
// elector last told it, open. Counted by the API server (its audit log, by
// user): the old holder sends no write at all once the Lease moved, since
// it cannot prove on its own clock that it still holds it; every instance
// ends ACTIVE with the last change, three ConfigMaps each, no more.
func TestPausedHolderWritesNothingAfterTheLeaseMoved(t *testing.T) {
	r := newRig(t)
	rgd := r.writeFile("rgd.yaml", graphs.Chain("fence", "Fence"))
	gvr := schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: "fences"}
	const leaseDur = 4 * time.Second
	lease := []string{"KROSCOPE_CHILD_LEASE_NAMESPACE=" + r.ns, "KROSCOPE_CHILD_LEASE_NAME=kroscope", "KROSCOPE_CHILD_LEASE_DURATION=" + leaseDur.String()}
	old := r.startChild("kroscope-a", rgd, lease...)
	eventually(t, 2*time.Minute, "kroscope-a holding the Lease", func() bool { return r.leaseHolder(r.ns, "kroscope") == "kroscope-a" })
	eventually(t, 2*time.Minute, "the instance CRD served", func() bool {
		_, err := r.dyn.Resource(gvr).Namespace(r.ns).List(t.Context(), metav1ListOptions())
		return err == nil
	})
	standby := r.startChild("kroscope-b", rgd, lease...)
	r.createInstances(gvr, "Fence", "f", instances)
	eventually(t, 3*time.Minute, "the instances ACTIVE", func() bool { return r.converged(gvr, instances, "one") })

	// Change every instance and freeze the holder in the middle of it.
	r.setValue(gvr, "two")
	time.Sleep(50 * time.Millisecond)
	if err := old.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	eventually(t, time.Minute, "kroscope-b holding the Lease", func() bool { return r.leaseHolder(r.ns, "kroscope") == "kroscope-b" })
	moved := r.leaseMoved("kroscope-b")
	t.Logf("the Lease moved to kroscope-b %v after kroscope-a was frozen", moved.Sub(stopped).Round(time.Millisecond))
	eventually(t, 3*time.Minute, "kroscope-b converging the change", func() bool { return r.converged(gvr, instances, "two") })
	// Work the old holder will find on waking: a second change.
	r.setValue(gvr, "three")
	time.Sleep(time.Until(stopped.Add(2 * leaseDur)))
	if err := old.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*time.Minute, "kroscope-b converging the second change", func() bool { return r.converged(gvr, instances, "three") })
	// The old holder's elector notices within its renew deadline; give it
	// that, and its workers their queue.
	time.Sleep(3 * leaseDur)
	after := r.writesBy("kroscope-a", moved)
	for i, ev := range after {
		if i < 10 {
			r.errorf("kroscope-a wrote after the Lease moved: %s %s %s/%s (%d) at %s", ev.Verb, ev.Resource, ev.Namespace, ev.Name, ev.Code, ev.Received.Format(time.RFC3339Nano))
		}
	}
	if len(after) > 0 {
		r.errorf("kroscope-a sent %d writes after the Lease moved to kroscope-b (at %s)", len(after), moved.Format(time.RFC3339Nano))
		t.FailNow()
	}
	if n := len(r.writesBy("kroscope-b", moved)); n == 0 {
		r.errorf("kroscope-b holds the Lease but the server saw no write from it")
		t.FailNow()
	}
	if !old.logged("cannot prove this kroscope still holds the lease") && !old.logged("not holding the lease") {
		r.errorf("kroscope-a's log says nothing of losing the Lease")
	}
	cms, err := r.env.Kubernetes().CoreV1().ConfigMaps(r.ns).List(t.Context(), metav1ListOptions())
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for _, cm := range cms.Items {
		if strings.HasPrefix(cm.Name, "f-") {
			got++
		}
	}
	if got != 3*instances {
		r.errorf("%d ConfigMaps of the graph, want %d", got, 3*instances)
	}
	t.Logf("writes counted by the API server after the Lease moved: kroscope-a 0, kroscope-b %d", len(r.writesBy("kroscope-b", moved)))
	_ = standby
}
