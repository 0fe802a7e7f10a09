package demo

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/reconciler"
)

// The demo starts, and takes an edit, without a false ERROR (#38: every
// start showed "Deployment demo/orders-transform was created on 7 passes
// in a row", and blog's replicas 2 -> 5 "Deployment demo/blog was created
// on 6 passes in a row", though nothing was ever recreated). Every state
// the engine publishes is looked at, until webapp's and fanout's
// instances are ACTIVE, then again after the edit until blog's five
// replicas are available.
func TestDemoStartsWithoutFalseErrors(t *testing.T) {
	d, err := New(Options{Examples: []string{"webapp", "fanout"}, Log: logr.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(d.EngineOptions(0, logr.Discard()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	engineDone, demoDone := make(chan error, 1), make(chan error, 1)
	go func() { engineDone <- e.Run(ctx) }()
	go func() { demoDone <- d.Run(ctx) }()
	defer func() {
		cancel()
		<-engineDone
		<-demoDone
	}()
	n := len(d.Instances())
	watchStates(t, e, "the start", func() bool { return countActive(e) == n })

	webapps := schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: "webapps"}
	if _, err := d.Cluster.Dynamic().Resource(webapps).Namespace(Namespace).Patch(ctx, "blog", types.MergePatchType,
		[]byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	watchStates(t, e, "blog's replicas 2 -> 5", func() bool {
		u, err := d.Cluster.Dynamic().Resource(deployments).Namespace(Namespace).Get(ctx, "blog", metav1.GetOptions{})
		if err != nil {
			return false
		}
		available := u.Object["status"].(map[string]any)["availableReplicas"]
		return fmt.Sprint(available) == "5" && countActive(e) == n
	})
}

// watchStates fails on every ERROR or FAILED instance the engine publishes
// until done, or after two minutes.
func watchStates(t *testing.T, e *engine.Engine, during string, done func() bool) {
	t.Helper()
	changes, unsubscribe := e.Subscribe()
	defer unsubscribe()
	seen := map[string]bool{}
	deadline := time.After(2 * time.Minute)
	for !done() {
		for _, in := range e.Snapshot().Instances {
			if (in.State == reconciler.InstanceStateError || in.State == reconciler.InstanceStateFailed) && !seen[in.Message] {
				seen[in.Message] = true
				t.Errorf("during %s: %s %s: %s", during, in.Key.Name, in.State, in.Message)
			}
		}
		select {
		case <-changes:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatalf("%s: not done after 2 minutes", during)
		}
	}
}

func countActive(e *engine.Engine) int {
	n := 0
	for _, in := range e.Snapshot().Instances {
		if in.State == reconciler.InstanceStateActive {
			n++
		}
	}
	return n
}
