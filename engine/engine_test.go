package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/requeue"
)

func obj(gen int64, labels, ann map[string]string, deleting bool) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGeneration(gen)
	u.SetLabels(labels)
	u.SetAnnotations(ann)
	if deleting {
		now := metav1.Now()
		u.SetDeletionTimestamp(&now)
	}
	return u
}

func TestNeedsReconcile(t *testing.T) {
	base := obj(1, map[string]string{"team": "a"}, nil, false)
	cases := []struct {
		name string
		cur  *unstructured.Unstructured
		want bool
	}{
		{"status write only", obj(1, map[string]string{"team": "a"}, nil, false), false},
		{"spec change", obj(2, map[string]string{"team": "a"}, nil, false), true},
		{"user label", obj(1, map[string]string{"team": "b"}, nil, false), true},
		{"label removed", obj(1, nil, nil, false), true},
		{"kroscope's own labels", obj(1, map[string]string{"team": "a", "kro.run/owned": "true", "app.kubernetes.io/managed-by": "kroscope"}, nil, false), false},
		{"annotation", obj(1, map[string]string{"team": "a"}, map[string]string{"x": "y"}, false), true},
		{"deletion", obj(1, map[string]string{"team": "a"}, nil, true), true},
		{"inventory written", obj(1, map[string]string{"team": "a", "applyset.kubernetes.io/id": "applyset-x-v1"},
			map[string]string{"applyset.kubernetes.io/contains-group-kinds": "ConfigMap", "internal.kro.run/applyset-inventory-hash": "sha256:x"}, false), false},
		{"suspended", obj(1, map[string]string{"team": "a"}, map[string]string{"kro.run/reconcile": "suspended"}, false), true},
		{"requeue asked", obj(1, map[string]string{"team": "a"}, map[string]string{RequeueAnnotation: "2026-12-01T12:00:00.1Z"}, false), true},
	}
	for _, c := range cases {
		if got := needsReconcile(base, c.cur); got != c.want {
			t.Errorf("%s: needsReconcile = %v, want %v", c.name, got, c.want)
		}
	}
	asked := obj(1, nil, map[string]string{RequeueAnnotation: "2026-12-01T12:00:00.1Z"}, false)
	again := obj(1, nil, map[string]string{RequeueAnnotation: "2026-12-01T12:00:05.2Z"}, false)
	if !requeueAsked(base, asked) || !requeueAsked(asked, again) || requeueAsked(asked, asked) {
		t.Errorf("requeueAsked does not follow the %s annotation's value", RequeueAnnotation)
	}
}

// fakeSet is an in-memory client set with no graphs in it.
func fakeSet() *client.Set {
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{})
	return client.NewSetFromClients(client.Clients{Dynamic: dyn, Discovery: nil})
}

func TestNewNeedsClients(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Fatal("New without a client set succeeded")
	}
}

func TestObserveGateRefusesDynamicWrites(t *testing.T) {
	e, err := New(Options{ClientSet: fakeSet(), Observe: true})
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x", "namespace": "ns"}}}
	if _, err := e.cl.gated().Dynamic().Resource(gvr).Namespace("ns").Create(context.Background(), cm, metav1.CreateOptions{}); err == nil {
		t.Fatal("observe mode let a create through")
	}
	if m := e.Snapshot().Mode; !m.Forced || m.Reconciling {
		t.Errorf("mode = %+v", m)
	}
}

func TestUnreachableServerIsFatal(t *testing.T) {
	set, err := client.NewSet(&rest.Config{Host: "https://127.0.0.1:1", Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	src := "kubeconfig /home/me/.kube/config, context kind-kind"
	e, err := New(Options{ClientSet: set, DisableLease: true, RGDPaths: []string{"x.yaml"},
		Cluster: state.Cluster{Server: "https://127.0.0.1:1", Source: src}})
	if err != nil {
		t.Fatal(err)
	}
	err = e.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "cannot reach the API server") {
		t.Fatalf("Run = %v", err)
	}
	// The hint names where the connection came from, and the demo.
	if f := e.Snapshot().Fatal; f == nil || !strings.Contains(f.Hint, src) || !strings.Contains(f.Hint, "https://127.0.0.1:1") ||
		!strings.Contains(f.Hint, "`kroscope demo`") {
		t.Errorf("Fatal = %+v", f)
	}
}

func TestPassesRunsImmediateRequeuesInPlace(t *testing.T) {
	settle := errors.New("a: created")
	cases := []struct {
		name    string
		results []error
		calls   int
		want    requeue.Decision
	}{
		{"converged", []error{nil}, 1, requeue.Forget},
		{"settles on the second pass", []error{requeue.Now(settle), nil}, 2, requeue.Forget},
		{"waits on a timer", []error{requeue.After(time.Minute, settle)}, 1, requeue.Later},
		// Bounded: an instance that keeps asking goes back to the queue.
		{"keeps asking", []error{requeue.Now(settle), requeue.Now(settle), requeue.Now(settle), requeue.Now(settle)}, immediatePasses, requeue.Immediately},
	}
	for _, c := range cases {
		calls := 0
		got, _, _ := passes(context.Background(), func() error {
			calls++
			return c.results[calls-1]
		})
		if calls != c.calls || got != c.want {
			t.Errorf("%s: %d calls, decision %v; want %d, %v", c.name, calls, got, c.calls, c.want)
		}
	}
}

func TestCollectionNameCountsItems(t *testing.T) {
	list := func(n int) *unstructured.Unstructured {
		items := make([]any, n)
		for i := range items {
			items[i] = map[string]any{}
		}
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "List", "items": items}}
	}
	cases := []struct {
		d    reconciler.ResourceDetail
		want string
	}{
		{reconciler.ResourceDetail{}, ""},
		{reconciler.ResourceDetail{Desired: list(3), Observed: list(2)}, "3 items"},
		{reconciler.ResourceDetail{Observed: list(1)}, "1 item"},
		{reconciler.ResourceDetail{Desired: list(0)}, "0 items"},
	}
	for _, c := range cases {
		if got := collectionName(&c.d); got != c.want {
			t.Errorf("collectionName = %q, want %q", got, c.want)
		}
	}
}

// countingQueue records how items are put back.
type countingQueue struct {
	workqueue.TypedRateLimitingInterface[item]
	added, rateLimited int
}

func (q *countingQueue) Add(item)            { q.added++ }
func (q *countingQueue) AddRateLimited(item) { q.rateLimited++ }
func (q *countingQueue) Forget(item)         {}

// TestImmediateRequeuesAreRateLimited: an instance that asks for an
// immediate requeue round after round (a child deleted by something on
// every pass) is rate-limited after immediateRounds rounds; any other
// outcome resets the count.
func TestImmediateRequeuesAreRateLimited(t *testing.T) {
	q := &countingQueue{}
	w := &workQueue{queue: q, log: logr.Discard()}
	it := item{name: "spinning"}
	again := requeue.Now(errors.New("resource cm: created"))
	for range immediateRounds + 3 {
		w.settle(it, "r", requeue.Immediately, 0, again)
	}
	if q.added != immediateRounds || q.rateLimited != 3 {
		t.Fatalf("added %d, rate-limited %d; want %d and 3", q.added, q.rateLimited, immediateRounds)
	}
	w.settle(it, "r", requeue.Forget, 0, nil)
	w.settle(it, "r", requeue.Immediately, 0, again)
	if q.added != immediateRounds+1 {
		t.Fatalf("the streak was not reset by a settled reconcile: added %d", q.added)
	}
}

// A reconcile that starts and ends between two figures still shows: the
// figures read the most workers busy since the previous ones, not the
// busy count at the instant of sampling (which said idle during a rollout
// of 16 reconciles a second).
func TestQueueStatsCountReconcilesBetweenSamples(t *testing.T) {
	q := workqueue.NewTypedRateLimitingQueueWithConfig[item](workqueue.DefaultTypedControllerRateLimiter[item](), workqueue.TypedRateLimitingQueueConfig[item]{Name: "test"})
	defer q.ShutDown()
	w := &workQueue{queue: q}
	w.begin()
	w.begin()
	w.end()
	w.end()
	if got := w.figures(4, 0, 2, 4).BusyWorkers; got != 2 {
		t.Fatalf("busy workers since the last figures = %d, want 2", got)
	}
	if w.figures(4, 0, 2, 4).Busy() {
		t.Fatal("busy after an interval with no reconcile, want idle")
	}
	w.begin()
	if got := w.figures(4, 0, 3, 4).BusyWorkers; got != 1 {
		t.Fatalf("busy workers with one reconciling = %d, want 1", got)
	}
}
