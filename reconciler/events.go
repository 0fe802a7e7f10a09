package reconciler

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/kroscope/kroscope/reconciler/client"
)

// newRecorder builds an EventRecorder that writes through the client set's
// clientset, and its broadcaster (to shut down); nil when the set has none.
func newRecorder(cs *client.Set) (record.EventRecorder, record.EventBroadcaster) {
	if cs == nil || cs.Kubernetes() == nil {
		return nil, nil
	}
	b := record.NewBroadcaster()
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.Kubernetes().CoreV1().Events("")})
	return b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kroscope"}), b
}

// Close releases what the controller started for its graph (the event
// broadcaster and its goroutines and caches). Call it once the graph
// stops and no Reconcile runs any more; Events after it are dropped.
func (c *Controller) Close() {
	c.mu.Lock()
	b := c.broadcaster
	c.broadcaster, c.closed = nil, true
	c.mu.Unlock()
	if b != nil {
		b.Shutdown()
	}
}

// event records an Event on the instance (never in observe mode).
func (r *run) event(typ, reason, msg string) {
	if r.recorder == nil || r.opts.Observe || r.inst == nil {
		return
	}
	if len(msg) > 1000 {
		msg = msg[:1000] + "…"
	}
	r.recorder.Event(r.inst, typ, reason, msg)
}
