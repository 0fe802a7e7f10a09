package reconciler

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// event records an Event on the instance (never in observe mode). Under
// impersonation it is written as the ServiceAccount, like everything else
// done for the instance: the shared recorder writes as kroscope itself.
func (r *run) event(typ, reason, msg string) {
	if r.observing() || r.inst == nil {
		return
	}
	msg = r.red.String(msg) // before the cut, which could split a value
	if len(msg) > 1000 {
		msg = msg[:1000] + "…"
	}
	if r.sa != "" && r.objs != nil && r.objs.Set() != r.c.clientSet && r.objs.Set().Kubernetes() != nil {
		r.impersonatedEvent(typ, reason, msg)
		return
	}
	if r.opts.Recorder == nil {
		return
	}
	r.opts.Recorder.Event(r.inst, typ, reason, msg)
}

// impersonatedEvent writes one Event through the run's (impersonated)
// client; a failure (e.g. the ServiceAccount may not create Events) is
// logged, not fatal.
func (r *run) impersonatedEvent(typ, reason, msg string) {
	now := metav1.NewTime(time.Now())
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name:      fmt.Sprintf("%s.%x", r.inst.GetName(), now.UnixNano()),
			Namespace: r.inst.GetNamespace(),
		},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: r.inst.GetAPIVersion(), Kind: r.inst.GetKind(), Namespace: r.inst.GetNamespace(),
			Name: r.inst.GetName(), UID: r.inst.GetUID(), ResourceVersion: r.inst.GetResourceVersion(),
		},
		Reason: reason, Message: msg, Type: typ,
		Source:         corev1.EventSource{Component: "kroscope"},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.ctx), 10*time.Second)
	defer cancel()
	if _, err := r.objs.Set().Kubernetes().CoreV1().Events(ev.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		r.log.V(1).Info("cannot write the Event as the instance's ServiceAccount", "reason", reason, "serviceAccount", r.sa, "error", err.Error())
	}
}
