package onewriter

import (
	"context"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kroscope/kroscope/engine/lease"
	"github.com/kroscope/kroscope/test/graphs"
)

// docs/in-cluster.md used to advise `--lease-namespace team-a` for a team
// reconciling its own namespace; beside the in-cluster kroscope (the
// default Lease, all namespaces) both wrote team-a's instances. Now the
// team's kroscope sees the other Lease, names its holder, and sends no
// write at all (counted by the API server) while that holder lives; once
// it is gone, the team's kroscope takes its own Lease and reconciles.
func TestOtherLeaseNamespaceGivesWayToTheHolder(t *testing.T) {
	r := newRig(t)
	rgd := r.writeFile("rgd.yaml", graphs.Chain("teamgraph", "TeamGraph"))
	gvr := schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: "teamgraphs"}
	teamLease := r.ns + "-lease"
	if _, err := r.env.Kubernetes().CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: teamLease}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	holder := r.startChild("kroscope-incluster", rgd, "KROSCOPE_CHILD_ALL_NAMESPACES=1",
		"KROSCOPE_CHILD_LEASE_NAMESPACE="+lease.DefaultNamespace, "KROSCOPE_CHILD_LEASE_NAME="+lease.DefaultName, "KROSCOPE_CHILD_LEASE_DURATION=4s")
	eventually(t, 2*time.Minute, "the in-cluster kroscope holding the default Lease", func() bool {
		return r.leaseHolder(lease.DefaultNamespace, lease.DefaultName) == "kroscope-incluster"
	})
	eventually(t, 2*time.Minute, "the instance CRD served", func() bool {
		_, err := r.dyn.Resource(gvr).Namespace(r.ns).List(t.Context(), metav1.ListOptions{})
		return err == nil
	})
	start := time.Now()
	team := r.startChild("kroscope-team", rgd, "KROSCOPE_CHILD_LEASE_NAMESPACE="+teamLease, "KROSCOPE_CHILD_LEASE_NAME=kroscope",
		"KROSCOPE_CHILD_LEASE_DURATION=4s")
	want := "another kroscope writes these instances (kroscope-incluster holds the lease " + lease.DefaultNamespace + "/" + lease.DefaultName + " and writes the instances of all namespaces)"
	eventually(t, 2*time.Minute, "the team's kroscope saying why it observes", func() bool { return team.logged(want) })
	r.createInstances(gvr, "TeamGraph", "t", 10)
	eventually(t, 3*time.Minute, "the holder converging the instances", func() bool { return r.converged(gvr, 10, "one") })
	r.setValue(gvr, "two")
	eventually(t, 3*time.Minute, "the holder converging a change", func() bool { return r.converged(gvr, 10, "two") })
	time.Sleep(5 * time.Second) // the team's kroscope reconciles on its own events and resyncs too
	if w := r.writesBy("kroscope-team", start); len(w) != 0 {
		for i, ev := range w {
			if i < 10 {
				t.Errorf("the team's kroscope wrote: %s %s %s/%s (%d)", ev.Verb, ev.Resource, ev.Namespace, ev.Name, ev.Code)
			}
		}
		t.Fatalf("the team's kroscope sent %d writes while the holder of the default Lease lived", len(w))
	}
	if r.leaseHolder(teamLease, "kroscope") != "" {
		t.Error("the team's kroscope took its Lease while another kroscope writes its instances")
	}
	t.Logf("the team's kroscope: 0 writes while the holder lived, counted by the API server; the holder %d", len(r.writesBy("kroscope-incluster", start)))

	// The holder goes (releasing its Lease): the team's kroscope writes.
	if err := holder.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_, _ = holder.cmd.Process.Wait()
	eventually(t, time.Minute, "the team's kroscope holding its own Lease", func() bool { return r.leaseHolder(teamLease, "kroscope") == "kroscope-team" })
	r.setValue(gvr, "three")
	eventually(t, 3*time.Minute, "the team's kroscope converging a change", func() bool { return r.converged(gvr, 10, "three") })
}
