package memcluster

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

var eventsGVR = schema.GroupVersionResource{Version: "v1", Resource: "events"}

// patchEvent applies the strategic merge patch the event recorder sends
// for a repeated Event (count and lastTimestamp); the cluster itself
// refuses strategic merge, as it does for every kind without Go types.
func (c *Cluster) patchEvent(ns, name string, data []byte) (*unstructured.Unstructured, error) {
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
	return c.update(eventsGVR, ns, u, metav1.UpdateOptions{FieldManager: "kroscope"}, "")
}
