package memcluster

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"
)

var (
	cmGVR     = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	deployGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

func mustYAML(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	obj := map[string]any{}
	if err := yaml.Unmarshal([]byte(s), &obj); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: obj}
}

const deployYAML = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: nginx}]}}
`

func TestCreateSetsServerMetadata(t *testing.T) {
	c := New(Options{})
	d := c.Dynamic().Resource(deployGVR).Namespace("default")
	got, err := d.Create(context.Background(), mustYAML(t, deployYAML), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetUID() == "" || got.GetResourceVersion() == "" || got.GetCreationTimestamp().Time.IsZero() {
		t.Fatalf("missing server metadata: %v", got.Object["metadata"])
	}
	if got.GetGeneration() != 1 {
		t.Fatalf("generation = %d, want 1", got.GetGeneration())
	}
	if _, err := d.Create(context.Background(), mustYAML(t, deployYAML), metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("second create: %v, want AlreadyExists", err)
	}
	if _, err := c.Dynamic().Resource(deployGVR).Namespace("nope").Create(context.Background(), func() *unstructured.Unstructured {
		u := mustYAML(t, deployYAML)
		u.SetNamespace("nope")
		return u
	}(), metav1.CreateOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("create in a missing namespace: %v, want NotFound", err)
	}
	unknown := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	if _, err := c.Dynamic().Resource(unknown).Namespace("default").List(context.Background(), metav1.ListOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("list of an unknown resource: %v, want NotFound", err)
	}
}

func TestGenerationAndStatusSubresource(t *testing.T) {
	ctx := context.Background()
	c := New(Options{})
	d := c.Dynamic().Resource(deployGVR).Namespace("default")
	obj, err := d.Create(ctx, mustYAML(t, deployYAML), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rv1 := obj.GetResourceVersion()

	// A label change is metadata: no generation bump, new resourceVersion.
	obj.SetLabels(map[string]string{"a": "b"})
	obj, err = d.Update(ctx, obj, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if obj.GetGeneration() != 1 || obj.GetResourceVersion() == rv1 {
		t.Fatalf("after label change: generation %d rv %s (was %s)", obj.GetGeneration(), obj.GetResourceVersion(), rv1)
	}

	// A status write through the main resource is ignored.
	_ = unstructured.SetNestedField(obj.Object, int64(2), "status", "readyReplicas")
	obj, err = d.Update(ctx, obj, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedInt64(obj.Object, "status", "readyReplicas"); found {
		t.Fatal("main-resource update changed status")
	}

	// UpdateStatus changes only status, and never the generation.
	_ = unstructured.SetNestedField(obj.Object, int64(2), "status", "readyReplicas")
	_ = unstructured.SetNestedField(obj.Object, int64(9), "spec", "replicas")
	obj, err = d.UpdateStatus(ctx, obj, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(obj.Object, "status", "readyReplicas"); r != 2 {
		t.Fatalf("status.readyReplicas = %d, want 2", r)
	}
	if r, _, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas"); r != 2 || obj.GetGeneration() != 1 {
		t.Fatalf("status update changed spec.replicas to %d / generation to %d", r, obj.GetGeneration())
	}

	// A spec change bumps the generation once.
	_ = unstructured.SetNestedField(obj.Object, int64(3), "spec", "replicas")
	obj, err = d.Update(ctx, obj, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if obj.GetGeneration() != 2 {
		t.Fatalf("generation after spec change = %d, want 2", obj.GetGeneration())
	}

	// A stale resourceVersion conflicts.
	stale := obj.DeepCopy()
	stale.SetResourceVersion(rv1)
	if _, err := d.Update(ctx, stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("stale update: %v, want Conflict", err)
	}

	// A no-op update keeps the resourceVersion.
	same, err := d.Update(ctx, obj, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if same.GetResourceVersion() != obj.GetResourceVersion() {
		t.Fatalf("no-op update moved resourceVersion %s -> %s", obj.GetResourceVersion(), same.GetResourceVersion())
	}
}

func TestFinalizersHoldDeletion(t *testing.T) {
	ctx := context.Background()
	c := New(Options{})
	cms := c.Dynamic().Resource(cmGVR).Namespace("default")
	cm := mustYAML(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: x, finalizers: [kro.run/finalizer]}, data: {a: b}}`)
	if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: "1"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := cms.Delete(ctx, "x", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := cms.Get(ctx, "x", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("object with a finalizer vanished on delete: %v", err)
	}
	if got.GetDeletionTimestamp() == nil {
		t.Fatal("no deletionTimestamp after delete")
	}
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	if _, err := cms.Patch(ctx, "x", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Get(ctx, "x", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("after removing the last finalizer: %v, want NotFound", err)
	}
	want := []watch.EventType{watch.Added, watch.Modified, watch.Deleted}
	for i, typ := range want {
		e := next(t, w)
		if e.Type != typ {
			t.Fatalf("event %d = %s, want %s", i, e.Type, typ)
		}
	}
}

func next(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case e, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed")
		}
		return e
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event within 10s")
	}
	return watch.Event{}
}

// A resourceVersion in an applied object is a precondition, as on a real
// API server: an apply that names a version the object no longer has is
// refused, one that names its version applies, and one over no object
// creates it. The reconciler's create-only-if-free (client.Objects.Create)
// relies on it: the demo applied over a taken name, so the reconciler
// counted a "creation" on every pass and flagged the child as deleted
// again and again (#38: a false ERROR on every demo start).
func TestApplyResourceVersionIsAPrecondition(t *testing.T) {
	ctx := context.Background()
	c := New(Options{})
	d := c.Dynamic().Resource(deployGVR).Namespace("default")
	withRV := func(rv string) *unstructured.Unstructured {
		u := mustYAML(t, deployYAML)
		u.SetResourceVersion(rv)
		return u
	}
	created, err := d.Apply(ctx, "web", withRV("1"), metav1.ApplyOptions{FieldManager: "kroscope"})
	if err != nil {
		t.Fatalf("apply with a resourceVersion over no object: %v, want it created", err)
	}
	if _, err := d.Apply(ctx, "web", withRV("1"), metav1.ApplyOptions{FieldManager: "kroscope"}); !apierrors.IsConflict(err) {
		t.Fatalf("apply naming a stale resourceVersion: %v, want Conflict", err)
	}
	if _, err := d.Apply(ctx, "web", withRV(created.GetResourceVersion()), metav1.ApplyOptions{FieldManager: "kroscope"}); err != nil {
		t.Fatalf("apply naming the current resourceVersion: %v", err)
	}
}

func TestServerSideApply(t *testing.T) {
	ctx := context.Background()
	c := New(Options{})
	d := c.Dynamic().Resource(deployGVR).Namespace("default")
	applied := mustYAML(t, deployYAML)
	if _, err := d.Apply(ctx, "web", applied, metav1.ApplyOptions{}); !apierrors.IsBadRequest(err) {
		t.Fatalf("apply without field manager: %v, want BadRequest", err)
	}
	obj, err := d.Apply(ctx, "web", applied, metav1.ApplyOptions{FieldManager: "kroscope"})
	if err != nil {
		t.Fatal(err)
	}
	if obj.GetGeneration() != 1 || len(obj.GetManagedFields()) != 1 || obj.GetManagedFields()[0].Manager != "kroscope" {
		t.Fatalf("after first apply: generation %d managedFields %+v", obj.GetGeneration(), obj.GetManagedFields())
	}
	// Re-applying the same object is a no-op.
	again, err := d.Apply(ctx, "web", applied, metav1.ApplyOptions{FieldManager: "kroscope"})
	if err != nil {
		t.Fatal(err)
	}
	if again.GetResourceVersion() != obj.GetResourceVersion() {
		t.Fatal("identical apply wrote")
	}
	// Another manager changing an owned field conflicts unless forced.
	other := mustYAML(t, `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, namespace: default}, spec: {replicas: 5}}`)
	if _, err := d.Apply(ctx, "web", other, metav1.ApplyOptions{FieldManager: "someone"}); !apierrors.IsConflict(err) {
		t.Fatalf("conflicting apply: %v, want Conflict", err)
	}
	forced, err := d.Apply(ctx, "web", other, metav1.ApplyOptions{FieldManager: "someone", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(forced.Object, "spec", "replicas"); r != 5 || forced.GetGeneration() != 2 {
		t.Fatalf("forced apply: replicas %d generation %d", r, forced.GetGeneration())
	}
	// Status apply changes status only.
	st := mustYAML(t, `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, namespace: default}, spec: {replicas: 1}, status: {readyReplicas: 4}}`)
	got, err := d.ApplyStatus(ctx, "web", st, metav1.ApplyOptions{FieldManager: "ctrl"})
	if err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(got.Object, "status", "readyReplicas"); r != 4 {
		t.Fatalf("status apply: readyReplicas %d", r)
	}
	if r, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas"); r != 5 {
		t.Fatalf("status apply changed spec.replicas to %d", r)
	}
	// Apply through Patch with a YAML body works the same.
	if _, err := d.Patch(ctx, "web", types.ApplyPatchType, []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {paused: true}\n"),
		metav1.PatchOptions{FieldManager: "yamler"}); err != nil {
		t.Fatal(err)
	}
}

func TestJSONPatch(t *testing.T) {
	ctx := context.Background()
	c := New(Options{})
	cms := c.Dynamic().Resource(cmGVR).Namespace("default")
	if _, err := cms.Create(ctx, mustYAML(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: x}, data: {a: "1"}}`), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := cms.Patch(ctx, "x", types.JSONPatchType, []byte(`[{"op":"replace","path":"/data/a","value":"2"}]`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(got.Object, "data", "a"); v != "2" {
		t.Fatalf("data.a = %q", v)
	}
	if _, err := cms.Patch(ctx, "x", types.StrategicMergePatchType, []byte(`{}`), metav1.PatchOptions{}); err == nil {
		t.Fatal("strategic merge patch accepted")
	}
	if _, err := cms.Patch(ctx, "x", types.MergePatchType, []byte(`{"metadata":{"resourceVersion":"1"}}`), metav1.PatchOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("patch with a stale resourceVersion: %v, want Conflict", err)
	}
}

const crdYAML = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: webapps.kro.run}
spec:
  group: kro.run
  scope: Namespaced
  names: {kind: WebApp, plural: webapps, singular: webapp, listKind: WebAppList}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              x: {type: integer}
              greeting: {type: string, default: hi}
              replicas: {type: integer, default: 2}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

func TestCRDTeachesKinds(t *testing.T) {
	ctx := context.Background()
	c := New(Options{})
	crd, err := c.Dynamic().Resource(crdGVR).Apply(ctx, "webapps.kro.run", mustYAML(t, crdYAML), metav1.ApplyOptions{FieldManager: "kroscope"})
	if err != nil {
		t.Fatal(err)
	}
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	established := false
	for _, cond := range conds {
		m := cond.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			established = true
		}
	}
	if !established {
		t.Fatalf("CRD not Established: %v", crd.Object["status"])
	}
	gvk := schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "WebApp"}
	m, err := c.ClientSet().RESTMapper().RESTMapping(gvk.GroupKind(), "v1alpha1")
	if err != nil {
		t.Fatal(err)
	}
	if m.Resource.Resource != "webapps" || m.Scope.Name() != "namespace" {
		t.Fatalf("mapping %+v", m)
	}
	apps := c.Dynamic().Resource(m.Resource).Namespace("default")
	inst, err := apps.Create(ctx, mustYAML(t, `{apiVersion: kro.run/v1alpha1, kind: WebApp, metadata: {name: a}, spec: {x: 1}}`), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g, _, _ := unstructured.NestedString(inst.Object, "spec", "greeting"); g != "hi" {
		t.Fatalf("schema default not applied: spec = %v", inst.Object["spec"])
	}
	if r, _, _ := unstructured.NestedInt64(inst.Object, "spec", "replicas"); r != 2 {
		t.Fatalf("integer default not applied as int64: spec = %#v", inst.Object["spec"])
	}
	_ = unstructured.SetNestedField(inst.Object, "ACTIVE", "status", "state")
	if inst, err = apps.UpdateStatus(ctx, inst, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if inst.GetGeneration() != 1 {
		t.Fatalf("instance generation %d after a status write", inst.GetGeneration())
	}
	// Bad CRDs get a clear error.
	bad := mustYAML(t, crdYAML)
	bad.SetName("wrong.kro.run")
	if _, err := c.Dynamic().Resource(crdGVR).Create(ctx, bad, metav1.CreateOptions{}); err == nil || !strings.Contains(err.Error(), "webapps.kro.run") {
		t.Fatalf("misnamed CRD: %v", err)
	}
}

func TestWatchResumesAndFilters(t *testing.T) {
	ctx := context.Background()
	c := New(Options{})
	cms := c.Dynamic().Resource(cmGVR).Namespace("default")
	create := func(name string, labels map[string]string) {
		u := mustYAML(t, `{apiVersion: v1, kind: ConfigMap}`)
		u.SetName(name)
		u.SetLabels(labels)
		if _, err := cms.Create(ctx, u, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create("a", map[string]string{"kro.run/owned": "true"})
	list, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "kro.run/owned=true"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Fatalf("list: %d items", len(list.Items))
	}
	create("b", nil) // not selected
	create("c", map[string]string{"kro.run/owned": "true"})
	// A watch from the list's resourceVersion sees exactly what came later.
	w, err := c.Metadata().Resource(cmGVR).Namespace("default").Watch(ctx, metav1.ListOptions{
		ResourceVersion: list.GetResourceVersion(), LabelSelector: "kro.run/owned=true"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	e := next(t, w)
	p, ok := e.Object.(*metav1.PartialObjectMetadata)
	if e.Type != watch.Added || !ok || p.Name != "c" {
		t.Fatalf("first event %s %#v", e.Type, e.Object)
	}
	// Removing the label turns the change into DELETED for this watch.
	if _, err := cms.Patch(ctx, "a", types.MergePatchType, []byte(`{"metadata":{"labels":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if e := next(t, w); e.Type != watch.Deleted || e.Object.(*metav1.PartialObjectMetadata).Name != "a" {
		t.Fatalf("label removal event %s", e.Type)
	}
	// Field selectors by name work (externalRef watches).
	fl, err := cms.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=b"})
	if err != nil || len(fl.Items) != 1 {
		t.Fatalf("field selector list: %v %d", err, len(fl.Items))
	}
}

func TestWatchTooOld(t *testing.T) {
	ctx := context.Background()
	c := New(Options{EventLog: 8})
	cms := c.Dynamic().Resource(cmGVR).Namespace("default")
	for i := range 20 {
		u := mustYAML(t, `{apiVersion: v1, kind: ConfigMap}`)
		u.SetName("cm" + string(rune('a'+i)))
		if _, err := cms.Create(ctx, u, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: "1"}); !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Fatalf("watch from a dropped resourceVersion: %v, want Expired", err)
	}
}

// The log is bounded by the encoded size of the versions it holds too: a
// rollout's superseded versions are dropped, recent ones still replay.
func TestWatchLogBoundedInBytes(t *testing.T) {
	ctx := context.Background()
	c := New(Options{EventLogBytes: 4 << 10})
	cms := c.Dynamic().Resource(cmGVR).Namespace("default")
	u := mustYAML(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: big}}`)
	if _, err := cms.Create(ctx, u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	first := c.ResourceVersion()
	for i := range 40 {
		patch := fmt.Sprintf(`{"data":{"v":"%d-%s"}}`, i, strings.Repeat("x", 400))
		if _, err := cms.Patch(ctx, "big", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: strconv.FormatInt(first, 10)}); !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Fatalf("watch from a version 40 writes of 400 bytes ago with a 4 KiB log: %v, want Expired", err)
	}
	recent := c.ResourceVersion() - 2
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: strconv.FormatInt(recent, 10)})
	if err != nil {
		t.Fatalf("watch from a recent version: %v", err)
	}
	defer w.Stop()
	for range 2 {
		select {
		case e := <-w.ResultChan():
			if e.Type != watch.Modified {
				t.Fatalf("replayed %s, want MODIFIED", e.Type)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the two logged events were not replayed")
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.logBytes > 4<<10 {
		t.Errorf("log holds %d bytes, bound 4096", c.logBytes)
	}
}

func TestInformersSeeEverything(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := New(Options{})
	cs := c.ClientSet()
	dyn := dynamicinformer.NewDynamicSharedInformerFactory(cs.Dynamic(), 0)
	md := metadatainformer.NewSharedInformerFactory(cs.Metadata(), 0)
	di := dyn.ForResource(deployGVR).Informer()
	mi := md.ForResource(cmGVR).Informer()
	dyn.Start(ctx.Done())
	md.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), di.HasSynced, mi.HasSynced) {
		t.Fatal("informers did not sync")
	}
	d := c.Dynamic().Resource(deployGVR).Namespace("default")
	if _, err := d.Create(ctx, mustYAML(t, deployYAML), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		u := mustYAML(t, `{apiVersion: v1, kind: ConfigMap}`)
		u.SetName("cm-" + string(rune('a'+i%26)) + string(rune('a'+i/26)))
		if _, err := c.Dynamic().Resource(cmGVR).Namespace("default").Create(ctx, u, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, func() bool { return len(di.GetStore().List()) == 1 && len(mi.GetStore().List()) == 50 })
	if err := d.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return len(di.GetStore().List()) == 0 })
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 20s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestOwnerGarbageCollection(t *testing.T) {
	ctx := context.Background()
	c := New(Options{})
	cms := c.Dynamic().Resource(cmGVR).Namespace("default")
	owner, err := cms.Create(ctx, mustYAML(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: owner}}`), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	child := mustYAML(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: child}}`)
	child.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: owner.GetUID()}})
	if _, err := cms.Create(ctx, child, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "owner", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Get(ctx, "child", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("orphaned child: %v, want NotFound", err)
	}
}

func TestFailRate(t *testing.T) {
	ctx := context.Background()
	c := New(Options{FailRate: 0.5, Seed: 1})
	cs := c.ClientSet()
	failed := 0
	for i := range 100 {
		u := mustYAML(t, `{apiVersion: v1, kind: ConfigMap}`)
		u.SetName("cm-" + string(rune('a'+i%26)) + string(rune('a'+i/26)))
		_, err := cs.Dynamic().Resource(cmGVR).Namespace("default").Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: "kroscope"})
		if err != nil {
			if !apierrors.IsInternalError(err) && !apierrors.IsConflict(err) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			if !strings.Contains(err.Error(), "injected") {
				t.Fatalf("error does not say it was injected: %v", err)
			}
			failed++
		}
	}
	if failed < 25 || failed > 75 {
		t.Fatalf("%d of 100 writes failed at rate 0.5", failed)
	}
	// CRDs never fail, nor does the unwrapped client.
	for range 20 {
		if _, err := cs.Dynamic().Resource(crdGVR).Apply(ctx, "webapps.kro.run", mustYAML(t, crdYAML), metav1.ApplyOptions{FieldManager: "kroscope"}); err != nil {
			t.Fatalf("CRD apply failed: %v", err)
		}
	}
}

func TestDiscoveryFollowsCRDs(t *testing.T) {
	c := New(Options{})
	d := c.ClientSet().Discovery()
	if _, err := d.ServerVersion(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ServerResourcesForGroupVersion("kro.run/v1alpha1"); err != nil {
		t.Fatalf("RGD resources not discoverable: %v", err)
	}
	if _, err := d.ServerResourcesForGroupVersion("example.com/v1"); !apierrors.IsNotFound(err) {
		t.Fatalf("unknown group version: %v, want NotFound", err)
	}
	if _, err := c.Dynamic().Resource(crdGVR).Create(context.Background(), mustYAML(t, crdYAML), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	l, err := d.ServerResourcesForGroupVersion("kro.run/v1alpha1")
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, r := range l.APIResources {
		names = append(names, r.Name)
	}
	if !strings.Contains(strings.Join(names, ","), "webapps,webapps/status") {
		t.Fatalf("resources after CRD: %v", names)
	}
}

// Writes merge outside the lock and commit only onto the version they read:
// concurrent applies and patches of one object by many managers lose none
// of them.
func TestConcurrentWritesLoseNothing(t *testing.T) {
	ctx := context.Background()
	c := New(Options{})
	cms := c.Dynamic().Resource(cmGVR).Namespace("default")
	if _, err := cms.Create(ctx, mustYAML(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: shared}}`), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const writers = 16
	var wg sync.WaitGroup
	errs := make(chan error, 2*writers)
	for i := range writers {
		wg.Go(func() {
			a := mustYAML(t, fmt.Sprintf(`{apiVersion: v1, kind: ConfigMap, metadata: {name: shared, namespace: default}, data: {a%d: "x"}}`, i))
			if _, err := cms.Apply(ctx, "shared", a, metav1.ApplyOptions{FieldManager: fmt.Sprintf("m%d", i)}); err != nil {
				errs <- err
			}
		})
		wg.Go(func() {
			p := fmt.Sprintf(`{"data":{"p%d":"y"}}`, i)
			if _, err := cms.Patch(ctx, "shared", types.MergePatchType, []byte(p), metav1.PatchOptions{FieldManager: "patcher"}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, err := cms.Get(ctx, "shared", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data, _, _ := unstructured.NestedStringMap(got.Object, "data")
	for i := range writers {
		for _, k := range []string{fmt.Sprintf("a%d", i), fmt.Sprintf("p%d", i)} {
			if data[k] == "" {
				t.Errorf("data.%s lost: %v", k, data)
			}
		}
	}
	if managers := len(got.GetManagedFields()); managers < writers+1 {
		t.Errorf("%d managedFields entries, want %d appliers and the patcher", managers, writers)
	}
}

// A mapping asked without a version finds the kind in any version its
// group serves, as discovery's mapper does: the reconciler maps the kinds
// an instance's inventory records that way, and in the demo found none, so
// a plan (and an apply) that drops a resource pruned nothing (#38).
func TestRESTMappingWithoutVersion(t *testing.T) {
	c := New(Options{})
	for _, gk := range []schema.GroupKind{{Group: "networking.k8s.io", Kind: "Ingress"}, {Kind: "ConfigMap"}, {Group: "apps", Kind: "Deployment"}} {
		m, err := c.RESTMapper().RESTMapping(gk)
		if err != nil {
			t.Errorf("RESTMapping(%s): %v", gk, err)
			continue
		}
		if m.Resource.Version != "v1" {
			t.Errorf("RESTMapping(%s) = %s, want version v1", gk, m.Resource)
		}
	}
	if _, err := c.RESTMapper().RESTMapping(schema.GroupKind{Group: "example.com", Kind: "Widget"}); err == nil {
		t.Error("RESTMapping of an unknown kind: no error")
	}
}

// With StableUIDs two clusters that make the same objects give them the
// same UIDs, and an object made again at a name gets a new one (render's
// output is reproducible: #38).
func TestStableUIDs(t *testing.T) {
	ctx := context.Background()
	uids := func() []types.UID {
		c := New(Options{StableUIDs: true})
		d := c.Dynamic().Resource(deployGVR).Namespace("default")
		var out []types.UID
		for range 2 {
			u, err := d.Create(ctx, mustYAML(t, deployYAML), metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, u.GetUID())
			if err := d.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	a, b := uids(), uids()
	if a[0] != b[0] || a[1] != b[1] {
		t.Errorf("UIDs %v then %v, want the same", a, b)
	}
	if a[0] == a[1] {
		t.Errorf("the object made again has the UID of the first: %s", a[0])
	}
}
