package reconciler

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/redact"
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

// events records Events on the instance, never in observe mode. Under
// impersonation they are written as the ServiceAccount (as), like
// everything else done for the instance: the shared recorder writes as
// kroscope itself.
type events struct {
	ctx      context.Context
	log      logr.Logger
	inst     *instance
	red      *redact.Set
	recorder record.EventRecorder
	// as is the impersonated clientset Events are created through, nil
	// when the recorder writes them; sa names its ServiceAccount.
	as      kubernetes.Interface
	sa      string
	observe bool
}

// event records one Event, its message redacted and bounded.
func (e *events) event(typ, reason, msg string) {
	if e.observe || e.inst.get() == nil {
		return
	}
	msg = e.red.String(msg) // before the cut, which could split a value
	if len(msg) > 1000 {
		msg = msg[:1000] + "…"
	}
	if e.as != nil {
		e.impersonated(typ, reason, msg)
		return
	}
	if e.recorder == nil {
		return
	}
	e.recorder.Event(e.inst.get(), typ, reason, msg)
}

// impersonated writes one Event through the run's (impersonated) client;
// a failure (e.g. the ServiceAccount may not create Events) is logged, not
// fatal.
func (e *events) impersonated(typ, reason, msg string) {
	u := e.inst.get()
	now := metav1.NewTime(time.Now())
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name:      fmt.Sprintf("%s.%x", u.GetName(), now.UnixNano()),
			Namespace: u.GetNamespace(),
		},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(),
			Name: u.GetName(), UID: u.GetUID(), ResourceVersion: u.GetResourceVersion(),
		},
		Reason: reason, Message: msg, Type: typ,
		Source:         corev1.EventSource{Component: "kroscope"},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(e.ctx), 10*time.Second)
	defer cancel()
	if _, err := e.as.CoreV1().Events(ev.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		e.log.V(1).Info("cannot write the Event as the instance's ServiceAccount", "reason", reason, "serviceAccount", e.sa, "error", err.Error())
	}
}
