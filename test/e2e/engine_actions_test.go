package e2e

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/test/graphs"
)

var externalRGD = graphs.RGD("engext", "EngExt", "spec:\n  suffix: string | default=x",
	graphs.ExternalRef("shared", "v1", "ConfigMap", "shared-settings"),
	graphs.ConfigMap("copy", "${schema.metadata.name}-copy", "color: ${shared.data.color}"))

// An externalRef is watched by name: its appearance wakes the instance
// that waits for it. A deleted child is recreated through its watch. No
// timer is involved: the requeue interval is ten minutes.
func TestEngineExternalRefAndDriftThroughWatches(t *testing.T) {
	r := newEngRig(t)
	run, gvr := r.serveFile("engext", externalRGD, watchesOnly)
	r.createInstance(gvr, "EngExt", "ext", nil)
	key := state.InstanceKey{Resource: gvr.Resource + "." + gvr.Group, Namespace: r.ns, Name: "ext"}
	run.waitFor(time.Minute, "the instance waiting for the external ConfigMap", func(s *state.Snapshot) bool {
		in := s.Instance(key)
		if in == nil {
			return false
		}
		res := in.Resource("shared")
		return res != nil && res.State == reconciler.ResourceStateWaitingForExternalResource
	})
	t0 := time.Now()
	r.applyYAML(gvrConfigMap, r.ns, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared-settings\ndata:\n  color: blue\n")
	run.waitFor(time.Minute, "the instance ACTIVE once the external ConfigMap exists", func(s *state.Snapshot) bool {
		in := s.Instance(key)
		return in != nil && in.State == reconciler.InstanceStateActive
	})
	t.Logf("external object created → instance ACTIVE in %s", time.Since(t0).Round(time.Millisecond))

	ctx := context.Background()
	if err := r.dyn.Resource(gvrConfigMap).Namespace(r.ns).Delete(ctx, "ext-copy", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := r.dyn.Resource(gvrConfigMap).Namespace(r.ns).Get(ctx, "ext-copy", metav1.GetOptions{}); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("deleted child not recreated within a minute")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Requeue bypasses the backoff of a failing instance; Delete removes the
// instance and the reconciler its children.
func TestEngineRequeueAndDeleteActions(t *testing.T) {
	r := newEngRig(t)
	run, gvr := r.serveFile("engact", graphs.Chain("engact", "EngAct"), watchesOnly)
	// An unlabelled ConfigMap holds the first child's name: ERROR, retried
	// with growing backoff (and not watched: it carries no kroscope label).
	r.applyYAML(gvrConfigMap, r.ns, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: act-a\n")
	r.createInstance(gvr, "EngAct", "act", nil)
	key := state.InstanceKey{Resource: gvr.Resource + "." + gvr.Group, Namespace: r.ns, Name: "act"}
	run.waitFor(time.Minute, "the instance in ERROR, retried a few times", func(s *state.Snapshot) bool {
		in := s.Instance(key)
		return in != nil && in.State == reconciler.InstanceStateError && in.Reconciles >= 4
	})
	ctx := context.Background()
	if err := r.dyn.Resource(gvrConfigMap).Namespace(r.ns).Delete(ctx, "act-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	if err := run.e.Requeue(key); err != nil {
		t.Fatal(err)
	}
	run.waitFor(30*time.Second, "the instance ACTIVE after a manual requeue", func(s *state.Snapshot) bool {
		in := s.Instance(key)
		return in != nil && in.State == reconciler.InstanceStateActive
	})
	t.Logf("manual requeue → ACTIVE in %s", time.Since(t0).Round(time.Millisecond))

	n, err := run.e.RequeueAll(func(in *state.Instance) bool { return in.Key == key })
	if err != nil || n != 1 {
		t.Errorf("RequeueAll = %d, %v", n, err)
	}
	if err := run.e.Requeue(state.InstanceKey{Resource: key.Resource, Namespace: r.ns, Name: "nope"}); err == nil {
		t.Errorf("Requeue of an unknown instance succeeded")
	}

	if err := run.e.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	run.waitFor(time.Minute, "the instance gone from the state", func(s *state.Snapshot) bool { return s.Instance(key) == nil })
	for _, name := range []string{"act-a", "act-a-b", "act-a-b-c"} {
		if _, err := r.dyn.Resource(gvrConfigMap).Namespace(r.ns).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("child %s still there after Delete (err %v)", name, err)
		}
	}
	if err := run.e.Delete(ctx, key); err == nil {
		t.Errorf("deleting a deleted instance succeeded")
	}
}
