package e2e

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/test/graphs"
)

var deploymentRGD = graphs.RGD("engwatch", "EngWatch", "spec:\n  image: string | default=nginx",
	graphs.Deployment("deployment", "${schema.metadata.name}", "image: ${schema.spec.image}", "readyWhen:\n- ${deployment.status.availableReplicas == 1}"),
	graphs.ConfigMap("config", "${deployment.metadata.name}-config", "image: ${schema.spec.image}"))

var engGVRDeployment = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// A child's status change makes the instance ACTIVE through a watch event:
// the requeue interval is ten minutes, so no timer can be involved.
func TestEngineChildStatusEventWakesInstance(t *testing.T) {
	r := newEngRig(t)
	run, gvr := r.serveFile("engwatch", deploymentRGD, watchesOnly)
	r.createInstance(gvr, "EngWatch", "web", nil)
	key := state.InstanceKey{Resource: gvr.Resource + "." + gvr.Group, Namespace: r.ns, Name: "web"}

	run.waitFor(time.Minute, "the deployment waiting for readiness", func(s *state.Snapshot) bool {
		in := s.Instance(key)
		if in == nil || in.State != reconciler.InstanceStateInProgress {
			return false
		}
		d := in.Resource("deployment")
		return d != nil && d.State == reconciler.ResourceStateWaitingForReadiness
	})
	// Let the engine settle: nothing queued, nothing running.
	before := run.waitFor(time.Minute, "the engine idle", func(s *state.Snapshot) bool {
		return s.Engine.QueueDepth == 0 && s.Engine.BusyWorkers == 0
	}).Instance(key).Reconciles

	ctx := context.Background()
	dep, err := r.dyn.Resource(engGVRDeployment).Namespace(r.ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedMap(dep.Object, map[string]any{
		"observedGeneration": dep.GetGeneration(), "replicas": int64(1), "readyReplicas": int64(1),
		"availableReplicas": int64(1), "updatedReplicas": int64(1),
	}, "status")
	t0 := time.Now()
	if _, err := r.dyn.Resource(engGVRDeployment).Namespace(r.ns).UpdateStatus(ctx, dep, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	snap := run.waitFor(time.Minute, "the instance ACTIVE", func(s *state.Snapshot) bool {
		in := s.Instance(key)
		return in != nil && in.State == reconciler.InstanceStateActive
	})
	latency := time.Since(t0)
	in := snap.Instance(key)
	transition := in.History[len(in.History)-1].At.Sub(t0)
	t.Logf("child status change → instance ACTIVE: %s seen by the test, %s at the state transition; %d reconcile(s) after the event",
		latency.Round(time.Millisecond), transition.Round(time.Millisecond), in.Reconciles-before)
	if latency > 30*time.Second {
		t.Errorf("ACTIVE took %s: not driven by the watch event", latency)
	}
	if c := in.Resource("config"); c == nil || c.State != reconciler.ResourceStateSynced {
		t.Errorf("the dependent config map is not SYNCED: %+v", c)
	}
}
