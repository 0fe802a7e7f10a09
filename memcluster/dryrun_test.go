package memcluster

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

var dryAll = []string{metav1.DryRunAll}

// dryRunAnswers makes every kind of write as a dry run on d (the webapp
// CRD served) and checks what a real API server answers: the object as it
// would be stored (defaulted, validated, with its server metadata), while
// nothing is stored and no watch event is sent. The demo's and
// kube-apiserver's tests share it.
func dryRunAnswers(t *testing.T, d dynamic.Interface, ns string) {
	t.Helper()
	ctx := context.Background()
	r := d.Resource(webappGVR).Namespace(ns)
	list, err := r.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := r.Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	webapp := func(name, spec string) *unstructured.Unstructured {
		return mustYAML(t, `{apiVersion: kro.run/v1alpha1, kind: WebApp, metadata: {name: `+name+`}, spec: `+spec+`}`)
	}
	replicas := func(what string, u *unstructured.Unstructured, err error, want int64) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas"); got != want {
			t.Errorf("%s: answered spec.replicas %d, want %d", what, got, want)
		}
	}

	u, err := r.Create(ctx, webapp("new", "{}"), metav1.CreateOptions{DryRun: dryAll})
	replicas("dry-run create (defaulted)", u, err, 2)
	if u.GetUID() == "" || u.GetCreationTimestamp().Time.IsZero() {
		t.Errorf("dry-run create: no server metadata in the answer: %v", u.Object["metadata"])
	}
	u, err = r.Apply(ctx, "new", webapp("new", "{replicas: 4}"), metav1.ApplyOptions{FieldManager: "me", DryRun: dryAll})
	replicas("dry-run apply creating", u, err, 4)
	if _, err := r.Get(ctx, "new", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after dry-run creates: get = %v, want NotFound", err)
	}

	kept, err := r.Create(ctx, webapp("kept", "{replicas: 3}"), metav1.CreateOptions{FieldManager: "me"})
	if err != nil {
		t.Fatal(err)
	}
	edit := kept.DeepCopy()
	_ = unstructured.SetNestedField(edit.Object, int64(5), "spec", "replicas")
	u, err = r.Update(ctx, edit, metav1.UpdateOptions{DryRun: dryAll})
	replicas("dry-run update", u, err, 5)
	u, err = r.Patch(ctx, "kept", types.MergePatchType, []byte(`{"spec":{"replicas":7}}`), metav1.PatchOptions{DryRun: dryAll})
	replicas("dry-run merge patch", u, err, 7)
	// Forced: the create's manager owns spec.replicas.
	u, err = r.Apply(ctx, "kept", webapp("kept", "{replicas: 9}"), metav1.ApplyOptions{FieldManager: "me", Force: true, DryRun: dryAll})
	replicas("dry-run apply", u, err, 9)
	if _, err := r.Apply(ctx, "kept", webapp("kept", "{replicas: 25}"), metav1.ApplyOptions{FieldManager: "me", Force: true, DryRun: dryAll}); !apierrors.IsInvalid(err) {
		t.Errorf("dry-run apply over the schema's maximum: %v, want Invalid", err)
	}
	if err := r.Delete(ctx, "kept", metav1.DeleteOptions{DryRun: dryAll}); err != nil {
		t.Errorf("dry-run delete: %v", err)
	}
	if err := r.Delete(ctx, "absent", metav1.DeleteOptions{DryRun: dryAll}); !apierrors.IsNotFound(err) {
		t.Errorf("dry-run delete of no object: %v, want NotFound", err)
	}
	if _, err := r.Create(ctx, webapp("odd", "{}"), metav1.CreateOptions{DryRun: []string{"Some"}}); err == nil {
		t.Errorf("dryRun=Some: accepted, want refused")
	}

	got, err := r.Get(ctx, "kept", metav1.GetOptions{})
	replicas("stored after the dry runs", got, err, 3)
	if got.GetResourceVersion() != kept.GetResourceVersion() {
		t.Errorf("resourceVersion %s after the dry runs, want %s: something was stored", got.GetResourceVersion(), kept.GetResourceVersion())
	}
	// The one event is the real create's.
	if e := next(t, w); e.Object.(*unstructured.Unstructured).GetName() != "kept" {
		t.Errorf("first watch event: %s %s, want the create of kept", e.Type, e.Object.(*unstructured.Unstructured).GetName())
	}
	select {
	case e := <-w.ResultChan():
		t.Errorf("a watch event after the dry runs: %s %v", e.Type, e.Object)
	case <-time.After(300 * time.Millisecond):
	}
}

// The demo answers dry runs as an API server does (#38: the demo's plan
// view said "dry run is not supported by the demo" on every change), and
// counts no write for them.
func TestDemoAnswersDryRuns(t *testing.T) {
	c := New(Options{})
	if _, err := c.Dynamic().Resource(crdGVR).Create(context.Background(), webappCRD(t), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	before := c.Writes()["me"]
	dryRunAnswers(t, c.Dynamic(), "default")
	if n := c.Writes()["me"] - before; n != 1 {
		t.Errorf("%d writes counted for me, want 1 (the real create)", n)
	}
}

// A dry run is never an injected failure: a plan would show it as the
// change's outcome.
func TestFailRateSparesDryRuns(t *testing.T) {
	c := New(Options{FailRate: 1, Seed: 1})
	r := c.ClientSet().Dynamic().Resource(cmGVR).Namespace("default")
	cm := mustYAML(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: x}, data: {a: b}}`)
	if _, err := r.Apply(context.Background(), "x", cm, metav1.ApplyOptions{FieldManager: "me", DryRun: dryAll}); err != nil {
		t.Fatalf("dry-run apply at fail rate 1: %v", err)
	}
	if _, err := r.Apply(context.Background(), "x", cm, metav1.ApplyOptions{FieldManager: "me"}); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("apply at fail rate 1: %v, want an injected failure", err)
	}
}

// The same dry runs on the real kube-apiserver give the same answers.
func TestDryRunAnswersOnTheAPIServer(t *testing.T) {
	d := webappAPIServer(t)
	ctx := context.Background()
	ns := "dryrun"
	nsObj := mustYAML(t, `{apiVersion: v1, kind: Namespace, metadata: {name: dryrun}}`)
	if _, err := d.Resource(nsGVR).Create(ctx, nsObj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	dryRunAnswers(t, d, ns)
}
