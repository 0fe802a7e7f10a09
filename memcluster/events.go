package memcluster

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

var eventsGVR = schema.GroupVersionResource{Version: "v1", Resource: "events"}

// kubernetes returns the typed clientset of the client set: client-go's
// fake (the engine only asks it for Leases and Deployments, which the demo
// never has), except that core Events are the cluster's own, so the Events
// the reconciler records are the ones the instance screen lists through the
// dynamic client. The fake's own tracker would keep every Event apart, and
// it builds a REST mapper of the whole scheme for each create: at 1,000
// instances, about 60 MB live of the demo's heap.
func (c *Cluster) kubernetes() kubernetes.Interface {
	cs := fake.NewClientset()
	cs.PrependReactor("*", "events", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetResource() != eventsGVR || a.GetSubresource() != "" {
			return false, nil, nil
		}
		obj, err := c.eventAction(a)
		return true, obj, err
	})
	return cs
}

func (c *Cluster) eventAction(a k8stesting.Action) (runtime.Object, error) {
	ns := a.GetNamespace()
	switch a := a.(type) {
	case k8stesting.CreateActionImpl:
		u, err := eventToUnstructured(a.GetObject())
		if err != nil {
			return nil, err
		}
		return typedEvent(c.create(eventsGVR, ns, u, metav1.CreateOptions{FieldManager: "kroscope"}, ""))
	case k8stesting.UpdateActionImpl:
		u, err := eventToUnstructured(a.GetObject())
		if err != nil {
			return nil, err
		}
		return typedEvent(c.update(eventsGVR, ns, u, metav1.UpdateOptions{FieldManager: "kroscope"}, ""))
	case k8stesting.PatchActionImpl:
		return c.patchEvent(ns, a.GetName(), a.GetPatchType(), a.GetPatch())
	case k8stesting.GetActionImpl:
		return typedEvent(c.get(eventsGVR, ns, a.GetName()))
	case k8stesting.DeleteActionImpl:
		return nil, c.delete(eventsGVR, ns, a.GetName(), a.GetDeleteOptions())
	case k8stesting.ListActionImpl:
		list, err := c.list(eventsGVR, ns, a.GetListOptions())
		if err != nil {
			return nil, err
		}
		out := &corev1.EventList{}
		out.ResourceVersion = list.GetResourceVersion()
		for i := range list.Items {
			var ev corev1.Event
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(list.Items[i].Object, &ev); err != nil {
				return nil, apierrors.NewInternalError(err)
			}
			out.Items = append(out.Items, ev)
		}
		return out, nil
	}
	return nil, apierrors.NewMethodNotSupported(eventsGVR.GroupResource(), a.GetVerb())
}

// patchEvent applies the strategic merge patch the event recorder sends
// for a repeated Event (count and lastTimestamp); the cluster itself
// refuses strategic merge, as it does for every kind without Go types.
func (c *Cluster) patchEvent(ns, name string, pt types.PatchType, data []byte) (runtime.Object, error) {
	if pt != types.StrategicMergePatchType {
		return typedEvent(c.patch(eventsGVR, ns, name, pt, data, metav1.PatchOptions{FieldManager: "kroscope"}, ""))
	}
	cur, err := c.get(eventsGVR, ns, name)
	if err != nil {
		return nil, err
	}
	curJSON, err := json.Marshal(cur.Object)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	patched, err := strategicpatch.StrategicMergePatch(curJSON, data, &corev1.Event{})
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("applying a strategic merge patch to Event %q: %v", name, err))
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(patched); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("patched Event %q: %v", name, err))
	}
	return typedEvent(c.update(eventsGVR, ns, u, metav1.UpdateOptions{FieldManager: "kroscope"}, ""))
}

func eventToUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("event: %v", err))
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion("v1")
	u.SetKind("Event")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp") // the cluster sets it
	return u, nil
}

func typedEvent(u *unstructured.Unstructured, err error) (runtime.Object, error) {
	if err != nil {
		return nil, err
	}
	ev := &corev1.Event{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, ev); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return ev, nil
}
