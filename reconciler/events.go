package reconciler

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/kroscope/kroscope/reconciler/client"
)

// newRecorder builds an EventRecorder that writes through the client set's
// clientset, or nil when the set has none.
func newRecorder(cs *client.Set) record.EventRecorder {
	if cs == nil || cs.Kubernetes() == nil {
		return nil
	}
	b := record.NewBroadcaster()
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.Kubernetes().CoreV1().Events("")})
	return b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kroscope"})
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
