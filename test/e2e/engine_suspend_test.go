package e2e

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
)

// TestEngineSuspendAndResume: with the requeue timer out of the way, the
// kro.run/reconcile annotation alone (no generation change) pauses the
// instance, which the engine shows as SUSPENDED and which writes no child;
// removing it resumes with the spec changed meanwhile.
func TestEngineSuspendAndResume(t *testing.T) {
	r := newEngRig(t)
	run, gvr := r.serveFile("engsuspend", metaGraph("EngSuspend", false), watchesOnly)
	r.createInstance(gvr, "EngSuspend", "app", nil)
	key := state.InstanceKey{Resource: gvr.Resource + "." + gvr.Group, Namespace: r.ns, Name: "app"}
	inState := func(st string) func(*state.Snapshot) bool {
		return func(s *state.Snapshot) bool { in := s.Instance(key); return in != nil && in.State == st }
	}
	run.waitFor(time.Minute, "ACTIVE", inState(reconciler.InstanceStateActive))

	ctx := context.Background()
	patch := func(body string) {
		t.Helper()
		if _, err := r.dyn.Resource(gvr).Namespace(r.ns).Patch(ctx, "app", types.MergePatchType, []byte(body), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	patch(`{"metadata":{"annotations":{"kro.run/reconcile":"suspended"}}}`)
	run.waitFor(30*time.Second, "SUSPENDED", inState(reconciler.InstanceStateSuspended))
	patch(`{"spec":{"value":"changed"}}`)
	time.Sleep(2 * time.Second)
	if s := run.e.Snapshot().Instance(key); s == nil || s.State != reconciler.InstanceStateSuspended {
		t.Fatalf("instance left SUSPENDED on a spec change: %+v", s)
	}
	cm, err := r.dyn.Resource(gvrConfigMap).Namespace(r.ns).Get(ctx, "app-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(cm.Object, "data", "v"); v != "x" {
		t.Fatalf("child written while suspended: v=%q", v)
	}

	patch(`{"metadata":{"annotations":{"kro.run/reconcile":null}}}`)
	run.waitFor(30*time.Second, "resumed", func(s *state.Snapshot) bool {
		if !inState(reconciler.InstanceStateActive)(s) {
			return false
		}
		cm, err := r.dyn.Resource(gvrConfigMap).Namespace(r.ns).Get(ctx, "app-a", metav1.GetOptions{})
		v, _, _ := unstructured.NestedString(cm.Object, "data", "v")
		return err == nil && v == "changed"
	})
}
