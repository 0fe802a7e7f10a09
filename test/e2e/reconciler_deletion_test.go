package e2e

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/metadata"
	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/graphs"
)

// layeredGraph has three layers: base; midA, midB (read base); leaf (reads
// mid1 and mid2).
func layeredGraph(kind string) string {
	cm := func(id, data string) string {
		return graphs.ConfigMap(id, "${schema.metadata.name}-"+strings.ToLower(id), "v: "+data)
	}
	return graphs.RGD(strings.ToLower(kind), kind, "spec:\n  value: string | default=x",
		cm("base", "${schema.spec.value}"),
		cm("midA", "${base.data.v}"),
		cm("midB", "${base.data.v}"),
		cm("leaf", `"${midA.data.v}-${midB.data.v}"`))
}

// deletionRecorder records the order in which children disappear.
type deletionRecorder struct {
	mu    sync.Mutex
	order []string
	stop  func()
}

func recordDeletions(t *testing.T, r *rig, uid string) *deletionRecorder {
	ctx, cancel := context.WithCancel(context.Background())
	w, err := r.dyn.Resource(gvrConfigMap).Namespace(r.ns).Watch(ctx, metav1.ListOptions{LabelSelector: metadata.InstanceIDLabel + "=" + uid})
	if err != nil {
		t.Fatal(err)
	}
	d := &deletionRecorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if ev.Type != watch.Deleted {
				continue
			}
			u := ev.Object.(*unstructured.Unstructured)
			d.mu.Lock()
			d.order = append(d.order, u.GetLabels()[metadata.NodeIDLabel])
			d.mu.Unlock()
		}
	}()
	d.stop = func() { cancel(); w.Stop(); <-done }
	t.Cleanup(d.stop)
	return d
}

func (d *deletionRecorder) get() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.order...)
}

func TestReconcilerDeletionReverseOrder(t *testing.T) {
	r := newRig(t, layeredGraph("RtDelete"))
	inst := r.create("apiVersion: kro.run/v1alpha1\nkind: RtDelete\nmetadata:\n  name: app\nspec: {}\n")
	r.untilState("app", reconciler.InstanceStateActive)

	// A finalizer on the leaf holds its layer, so the test can see that the
	// middle layer waits for it.
	leaf := r.get(gvrConfigMap, r.ns, "app-leaf")
	leaf.SetFinalizers([]string{"e2e.kroscope.dev/hold"})
	if _, err := r.dyn.Resource(gvrConfigMap).Namespace(r.ns).Update(ctxT(t), leaf, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	rec := recordDeletions(t, r, string(inst.GetUID()))
	r.deleteInstance("app")

	o := r.until("app", 60*time.Second, "leaf deleting", func(o reconciler.Observation, _ error) bool {
		return o.Resources["leaf"] != nil && o.Resources["leaf"].State == reconciler.ResourceStateDeleting
	})
	if o.State.State != reconciler.InstanceStateDeleting {
		t.Errorf("instance state %s, want DELETING", o.State.State)
	}
	for _, id := range []string{"base", "midA", "midB"} {
		if got := o.Resources[id].State; got != reconciler.ResourceStatePendingDeletion {
			t.Errorf("%s: state %s while the leaf is held, want PENDING_DELETION", id, got)
		}
	}
	for _, id := range []string{"base", "mida", "midb"} {
		if r.get(gvrConfigMap, r.ns, "app-"+id) == nil {
			t.Errorf("app-%s deleted before the leaf was gone", id)
		}
	}
	leaf = r.get(gvrConfigMap, r.ns, "app-leaf")
	leaf.SetFinalizers(nil)
	if _, err := r.dyn.Resource(gvrConfigMap).Namespace(r.ns).Update(ctxT(t), leaf, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	r.untilGone("app")
	for _, n := range []string{"base", "mida", "midb", "leaf"} {
		if r.get(gvrConfigMap, r.ns, "app-"+n) != nil {
			t.Errorf("app-%s left behind", n)
		}
	}
	var order []string
	deadline := time.Now().Add(30 * time.Second)
	for len(order) < 4 && time.Now().Before(deadline) {
		order = rec.get()
		time.Sleep(50 * time.Millisecond)
	}
	pos := map[string]int{}
	for i, id := range order {
		pos[id] = i
	}
	if len(order) != 4 || pos["leaf"] != 0 || pos["base"] != 3 {
		t.Fatalf("deletion order %v: want leaf first, then midA/midB, then base", order)
	}
}

func TestReconcilerDeletionOrphan(t *testing.T) {
	r := newRig(t, layeredGraph("RtOrphan"), func(c *rigConfig) { c.cfg.DeletionPolicy = reconciler.DeletionPolicyOrphan })
	r.create("apiVersion: kro.run/v1alpha1\nkind: RtOrphan\nmetadata:\n  name: app\nspec: {}\n")
	r.untilState("app", reconciler.InstanceStateActive)
	r.deleteInstance("app")
	r.untilGone("app")
	for _, n := range []string{"base", "mida", "midb", "leaf"} {
		cm := r.get(gvrConfigMap, r.ns, "app-"+n)
		if cm == nil {
			t.Errorf("app-%s was deleted; Orphan keeps children", n)
			continue
		}
		for k := range cm.GetLabels() {
			if strings.HasPrefix(k, "kro.run/") || k == metadata.ManagedByLabel {
				t.Errorf("app-%s still carries label %s", n, k)
			}
		}
		if refs := cm.GetOwnerReferences(); len(refs) != 0 {
			t.Errorf("app-%s still has owner references %v", n, refs)
		}
	}
}

func TestReconcilerDeletionUnknownPolicy(t *testing.T) {
	r := newRig(t, layeredGraph("RtBadPolicy"), func(c *rigConfig) { c.cfg.DeletionPolicy = "Shred" })
	r.create("apiVersion: kro.run/v1alpha1\nkind: RtBadPolicy\nmetadata:\n  name: app\nspec: {}\n")
	r.untilState("app", reconciler.InstanceStateActive)
	r.deleteInstance("app")
	o, err := r.reconcile("app")
	if err == nil || !strings.Contains(err.Error(), `unknown deletion policy "Shred"`) {
		t.Fatalf("err %v, want the unknown policy named", err)
	}
	if !strings.Contains(o.Message, "Shred") {
		t.Errorf("message %q does not name the policy", o.Message)
	}
	if r.get(gvrConfigMap, r.ns, "app-base") == nil {
		t.Error("a child was deleted under an unknown policy")
	}
}

// A dependency that vanished must not stop deletion: children are found by
// labels, not by evaluating templates.
func TestReconcilerDeletionWithoutCEL(t *testing.T) {
	r := newRig(t, layeredGraph("RtDeleteNoCEL"))
	r.create("apiVersion: kro.run/v1alpha1\nkind: RtDeleteNoCEL\nmetadata:\n  name: app\nspec: {}\n")
	r.untilState("app", reconciler.InstanceStateActive)
	// Remove the base by hand: its dependents can no longer be
	// rendered, yet deletion completes.
	if err := r.dyn.Resource(gvrConfigMap).Namespace(r.ns).Delete(ctxT(t), "app-base", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	r.deleteInstance("app")
	r.untilGone("app")
	for _, n := range []string{"base", "mida", "midb", "leaf"} {
		if r.get(gvrConfigMap, r.ns, "app-"+n) != nil {
			t.Errorf("app-%s left behind", n)
		}
	}
}

func TestReconcilerDeletionGraceTime(t *testing.T) {
	r := newRig(t, layeredGraph("RtGrace"), func(c *rigConfig) { c.cfg.DeletionGraceTimeDuration = time.Second })
	r.create("apiVersion: kro.run/v1alpha1\nkind: RtGrace\nmetadata:\n  name: app\nspec: {}\n")
	r.untilState("app", reconciler.InstanceStateActive)
	leaf := r.get(gvrConfigMap, r.ns, "app-leaf")
	leaf.SetFinalizers([]string{"e2e.kroscope.dev/hold"})
	if _, err := r.dyn.Resource(gvrConfigMap).Namespace(r.ns).Update(ctxT(t), leaf, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	r.deleteInstance("app")
	o := r.until("app", 60*time.Second, "leaf deletion overdue", func(o reconciler.Observation, _ error) bool {
		d := o.Resources["leaf"]
		return d != nil && d.State == reconciler.ResourceStateError
	})
	if err := o.Resources["leaf"].Err; err == nil || !strings.Contains(err.Error(), "deletion has taken longer than 1s") {
		t.Fatalf("leaf error %v", err)
	}
	inst := r.instance("app")
	if c := envtest.Condition(inst, "ResourcesReady"); c == nil || !strings.Contains(c["message"].(string), "deletion has taken longer than") {
		t.Errorf("ResourcesReady %v does not show the overdue deletion", c)
	}
	// Deletion never removes another controller's finalizer.
	if got := r.get(gvrConfigMap, r.ns, "app-leaf").GetFinalizers(); len(got) != 1 {
		t.Errorf("leaf finalizers %v: kroscope must not touch them", got)
	}
	leaf = r.get(gvrConfigMap, r.ns, "app-leaf")
	leaf.SetFinalizers(nil)
	if _, err := r.dyn.Resource(gvrConfigMap).Namespace(r.ns).Update(ctxT(t), leaf, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	r.untilGone("app")
}
