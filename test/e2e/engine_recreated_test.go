package e2e

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/test/graphs"
)

var recreatedRGD = graphs.RGD("engrecr", "EngRecr", "spec: {}",
	graphs.ConfigMap("cm", "${schema.metadata.name}-cm", "k: v"))

// TestChildDeletedOnEveryPass: a child that something deletes as soon as
// it appears makes the instance ERROR, naming the resource id, the object
// and that something keeps deleting it, within a bounded number of passes;
// once the deleter stops the instance is ACTIVE again.
func TestChildDeletedOnEveryPass(t *testing.T) {
	r := newEngRig(t)
	file := r.writeFile("recr.yaml", recreatedRGD)
	run := r.start(func(o *engine.Options) {
		o.RGDPaths = []string{file}
		o.RequeueInterval = 500 * time.Millisecond
		o.ReconcileConfig.DefaultRequeueDuration = 500 * time.Millisecond
	})
	gvr := run.graphServed("engrecr")
	key := state.InstanceKey{Resource: gvr.GroupResource().String(), Namespace: r.ns, Name: "one"}

	// The deleter removes the ConfigMap whenever it appears.
	// A client of its own without client-side throttling: the deleter
	// polls every 5ms and must not queue behind its own rate limit.
	dcfg := rest.CopyConfig(r.cfg)
	dcfg.QPS, dcfg.Burst = -1, 0
	cms := dynamic.NewForConfigOrDie(dcfg).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(r.ns)
	ctx, stopDeleter := context.WithCancel(context.Background())
	defer stopDeleter()
	var deletes, deleteErrs atomic.Int64
	var lastErr atomic.Value
	deleterDone := make(chan struct{})
	go func() {
		defer close(deleterDone)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				err := cms.Delete(dctx, "one-cm", metav1.DeleteOptions{})
				cancel()
				switch {
				case err == nil:
					deletes.Add(1)
				case apierrors.IsNotFound(err) || ctx.Err() != nil:
				default: // a busy API server (429, timeout): try again on the next tick
					deleteErrs.Add(1)
					lastErr.Store(err.Error())
				}
			}
		}
	}()

	r.createInstance(gvr, "EngRecr", "one", nil)
	var msg string
	var reconciles int64
	run.waitFor(2*time.Minute, "instance ERROR: something keeps deleting cm", func(s *state.Snapshot) bool {
		if deleteErrs.Load() > 0 {
			t.Logf("deleter: %d deletes, %d failed (last: %v)", deletes.Load(), deleteErrs.Load(), lastErr.Load())
		}
		for _, in := range s.Instances {
			if in.Key == key && in.State == reconciler.InstanceStateError {
				msg, reconciles = in.Message, in.Reconciles
				return strings.Contains(in.Message, "something keeps deleting it")
			}
		}
		return false
	})
	for _, want := range []string{"resource cm", "one-cm"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not name %q", msg, want)
		}
	}
	// Bounded: the limit's passes plus the in-between passes that still
	// saw the deleted object in the cache, with room for watch lag.
	if limit := int64(4*reconciler.RecreateLimit + 4); reconciles > limit {
		t.Errorf("ERROR after %d reconciles, want at most %d", reconciles, limit)
	}
	t.Logf("ERROR after %d reconciles, %d deletes: %s", reconciles, deletes.Load(), msg)

	stopDeleter()
	<-deleterDone
	run.allInState(key.Resource, 1, reconciler.InstanceStateActive, time.Minute)
	if _, err := cms.Get(context.Background(), "one-cm", metav1.GetOptions{}); err != nil {
		t.Fatalf("the ConfigMap after recovery: %v", err)
	}
}
