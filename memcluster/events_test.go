package memcluster

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Events written through the typed clientset (as the event recorder does)
// land in the cluster's store, where the instance screen lists them through
// the dynamic client; the recorder's strategic merge patch for a repeated
// Event updates its count.
func TestEventsAreTheClusters(t *testing.T) {
	ctx := context.Background()
	c := New(Options{})
	evs := c.ClientSet().Kubernetes().CoreV1().Events("default")
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "web.1", Namespace: "default"},
		InvolvedObject: corev1.ObjectReference{Kind: "WebApp", Name: "web", Namespace: "default", UID: "u-1"},
		Reason:         "StateActive", Message: "IN_PROGRESS -> ACTIVE", Type: corev1.EventTypeNormal,
		Source:         corev1.EventSource{Component: "kroscope"},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	got, err := evs.CreateWithEventNamespace(ev)
	if err != nil {
		t.Fatal(err)
	}
	if got.ResourceVersion == "" || got.UID == "" {
		t.Errorf("created Event has no server metadata: %+v", got.ObjectMeta)
	}
	if _, err := evs.PatchWithEventNamespace(ev, []byte(`{"count":2,"message":"again"}`)); err != nil {
		t.Fatalf("strategic merge patch: %v", err)
	}
	list, err := c.Dynamic().Resource(eventsGVR).Namespace("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Fatalf("the dynamic client lists %d Events, want 1", len(list.Items))
	}
	u := list.Items[0].Object
	if n, _, _ := unstructured.NestedInt64(u, "count"); n != 2 {
		t.Errorf("count %d after the patch, want 2", n)
	}
	if uid, _, _ := unstructured.NestedString(u, "involvedObject", "uid"); uid != "u-1" {
		t.Errorf("involvedObject.uid %q", uid)
	}
	if last, _, _ := unstructured.NestedString(u, "lastTimestamp"); last != now.UTC().Format(time.RFC3339) {
		t.Errorf("lastTimestamp %q, want %s", last, now.UTC().Format(time.RFC3339))
	}
	// The instance screen's query: by involvedObject.uid.
	for uid, want := range map[string]int{"u-1": 1, "u-2": 0} {
		sel := metav1.ListOptions{FieldSelector: "involvedObject.uid=" + uid}
		l, err := c.Dynamic().Resource(eventsGVR).Namespace("default").List(ctx, sel)
		if err != nil || len(l.Items) != want {
			t.Errorf("Events with involvedObject.uid=%s: %v, %d listed, want %d", uid, err, len(l.Items), want)
		}
	}
	typed, err := evs.List(ctx, metav1.ListOptions{})
	if err != nil || len(typed.Items) != 1 || typed.Items[0].Message != "again" {
		t.Fatalf("typed list: %v %+v", err, typed)
	}
}
