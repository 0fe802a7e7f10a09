package engine

import (
	"context"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler/client"
)

// eventsGVR is core/v1 Events: kroscope's own Events on instances are
// written there (the recorder's API), so that is where to read them.
var eventsGVR = schema.GroupVersionResource{Version: "v1", Resource: "events"}

// eventLimit bounds the Events listed for one instance.
const eventLimit = 100

// InstanceDetail reads what the instance pane shows: the instance from the
// informer's cache, and its Events from the API server (one list, filtered
// by the instance's UID). The terminal UI asks for it only while the pane
// is on screen, so nothing is listed for instances nobody looks at.
func (e *Engine) InstanceDetail(ctx context.Context, key state.InstanceKey) (state.InstanceDetail, error) {
	d := state.InstanceDetail{Key: key, At: time.Now()}
	_, u, err := cachedInstance(e.table, key)
	if err != nil {
		return d, err
	}
	unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
	d.Object = u.Object
	d.Conditions = conditionsOf(u)
	d.Events, err = listEvents(ctx, e.cl.gated(), u.GetNamespace(), string(u.GetUID()))
	if err != nil {
		d.EventsErr = fmt.Errorf("listing the Events of %s: %w", u.GetName(), err).Error()
	}
	return d, nil
}

// conditionsOf reads status.conditions, skipping malformed entries.
func conditionsOf(u *unstructured.Unstructured) []state.Condition {
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var out []state.Condition
	for _, x := range list {
		m, ok := x.(map[string]any)
		if !ok {
			continue
		}
		c := state.Condition{}
		c.Type, _, _ = unstructured.NestedString(m, "type")
		c.Status, _, _ = unstructured.NestedString(m, "status")
		c.Reason, _, _ = unstructured.NestedString(m, "reason")
		c.Message, _, _ = unstructured.NestedString(m, "message")
		c.ObservedGeneration, _, _ = unstructured.NestedInt64(m, "observedGeneration")
		if ts, _, _ := unstructured.NestedString(m, "lastTransitionTime"); ts != "" {
			if t, err := time.Parse(time.RFC3339, ts); err == nil {
				c.LastTransition = t
			}
		}
		if c.Type != "" {
			out = append(out, c)
		}
	}
	return out
}

// listEvents lists the Events about the object uid in namespace ("": all
// namespaces), newest first.
func listEvents(ctx context.Context, set *client.Set, namespace, uid string) ([]state.Event, error) {
	sel := fields.OneTermEqualSelector("involvedObject.uid", uid).String()
	list, err := set.Dynamic().Resource(eventsGVR).Namespace(namespace).List(ctx, metav1.ListOptions{FieldSelector: sel, Limit: eventLimit})
	if err != nil {
		return nil, err
	}
	var out []state.Event
	for i := range list.Items {
		if ev, ok := eventOf(&list.Items[i], uid); ok {
			out = append(out, ev)
		}
	}
	slices.SortStableFunc(out, func(a, b state.Event) int { return b.Last.Compare(a.Last) })
	return out, nil
}

// eventOf reads an Event about the object uid; false when it is about
// another (in-memory clients ignore field selectors: the object is checked).
func eventOf(it *unstructured.Unstructured, uid string) (state.Event, bool) {
	if got, _, _ := unstructured.NestedString(it.Object, "involvedObject", "uid"); got != uid {
		return state.Event{}, false
	}
	ev := state.Event{}
	ev.Type, _, _ = unstructured.NestedString(it.Object, "type")
	ev.Reason, _, _ = unstructured.NestedString(it.Object, "reason")
	ev.Message, _, _ = unstructured.NestedString(it.Object, "message")
	ev.Count, _, _ = unstructured.NestedInt64(it.Object, "count")
	ev.Source, _, _ = unstructured.NestedString(it.Object, "source", "component")
	if ev.Source == "" {
		ev.Source, _, _ = unstructured.NestedString(it.Object, "reportingComponent")
	}
	ev.Last = eventTime(it)
	return ev, true
}

// eventTime is when an Event last happened: lastTimestamp, else eventTime
// (events.k8s.io writers), else its creation.
func eventTime(u *unstructured.Unstructured) time.Time {
	for _, f := range [][]string{{"lastTimestamp"}, {"eventTime"}, {"firstTimestamp"}} {
		if s, _, _ := unstructured.NestedString(u.Object, f...); s != "" {
			for _, layout := range []string{time.RFC3339Nano, time.RFC3339} {
				if t, err := time.Parse(layout, s); err == nil {
					return t
				}
			}
		}
	}
	return u.GetCreationTimestamp().Time
}
