package engine

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kroscope/kroscope/engine/packed"
	"github.com/kroscope/kroscope/engine/slim"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler/metadata"
)

// storedInstance is what an instance informer keeps of an instance: its
// metadata typed (what the event handlers, the queue and kro detection
// read) and the rest of the object encoded (what a reconcile, the detail
// view and the editor decode, one instance at a time). As a map tree an
// instance with its status conditions cost about 9 KB; stored like this,
// about a third. Labels and annotations live in the typed metadata only,
// so they are not held twice.
type storedInstance struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	rest packed.Object
}

func (s *storedInstance) DeepCopyObject() runtime.Object {
	c := *s
	s.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	return &c // rest is immutable: shared
}

// Unstructured decodes a fresh copy of the instance, the caller's to change.
func (s *storedInstance) Unstructured() (*unstructured.Unstructured, error) {
	m, err := s.rest.Unpack()
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	if len(s.Labels) > 0 {
		u.SetLabels(s.Labels)
	}
	if len(s.Annotations) > 0 {
		u.SetAnnotations(s.Annotations)
	}
	return u, nil
}

// storeInstance is the instance informers' transform: slim (package slim),
// then stored as a storedInstance. An object that cannot be encoded (none
// can: it came as JSON) is stored as it came; instanceObject reads both.
func storeInstance(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil // a tombstone of what was stored already
	}
	slim.Unstructured(u)
	s := &storedInstance{
		TypeMeta: metav1.TypeMeta{APIVersion: u.GetAPIVersion(), Kind: u.GetKind()},
		ObjectMeta: metav1.ObjectMeta{
			Name: u.GetName(), Namespace: u.GetNamespace(), UID: u.GetUID(), ResourceVersion: u.GetResourceVersion(),
			Generation: u.GetGeneration(), CreationTimestamp: u.GetCreationTimestamp(), DeletionTimestamp: u.GetDeletionTimestamp(),
			DeletionGracePeriodSeconds: u.GetDeletionGracePeriodSeconds(),
			Labels:                     slim.Labels(u.GetLabels()), Annotations: u.GetAnnotations(),
			Finalizers: u.GetFinalizers(), OwnerReferences: u.GetOwnerReferences(), ManagedFields: u.GetManagedFields(),
		},
	}
	// The object without what the typed metadata holds for it.
	rest := make(map[string]any, len(u.Object))
	for k, v := range u.Object {
		rest[k] = v
	}
	if md, ok := u.Object["metadata"].(map[string]any); ok {
		m := make(map[string]any, len(md))
		for k, v := range md {
			if k != "labels" && k != "annotations" {
				m[k] = v
			}
		}
		rest["metadata"] = m
	}
	p, err := packed.Pack(rest)
	if err != nil {
		return u, nil
	}
	s.rest = p
	return s, nil
}

// instanceObject returns a copy of what an instance informer holds (a
// storedInstance or, if it could not be stored so, the object itself) as
// an unstructured object the caller may change.
func instanceObject(item any) (*unstructured.Unstructured, bool) {
	switch o := item.(type) {
	case *storedInstance:
		u, err := o.Unstructured()
		return u, err == nil
	case *unstructured.Unstructured:
		return o.DeepCopy(), true
	}
	return nil, false
}

// instanceMeta is the metadata and the kind of what an instance informer
// holds: all its event handlers read.
func instanceMeta(item any) (metav1.Object, schema.GroupVersionKind, bool) {
	m, ok := item.(metav1.Object)
	if !ok {
		return nil, schema.GroupVersionKind{}, false
	}
	o, ok := item.(runtime.Object)
	if !ok {
		return nil, schema.GroupVersionKind{}, false
	}
	return m, o.GetObjectKind().GroupVersionKind(), true
}

// ownLabels are the instance labels kroscope itself writes: a change of
// only these is kroscope's own write and needs no reconcile.
var ownLabels = map[string]bool{
	metadata.OwnedLabel: true, metadata.GraphNameLabel: true, metadata.ManagedByLabel: true,
	metadata.KroVersionLabel: true, metadata.GraphIDLabel: true, metadata.ApplySetIDLabel: true,
}

// ownAnnotations are the ApplySet inventory annotations the reconciler
// writes on the instance. Every other annotation counts, the
// kro.run/reconcile pause switch among them: flipping it moves no
// generation but must wake the instance.
var ownAnnotations = map[string]bool{
	metadata.ApplySetToolingAnnotation: true, metadata.ApplySetGroupKindsAnnotation: true,
	metadata.ApplySetNamespacesAnnotation: true, metadata.InventoryHashAnnotation: true,
	metadata.PrunedGraphAnnotation: true,
}

// needsReconcile: a spec change (generation), a label or annotation change
// by someone else, or deletion. The instance's own status writes do not
// count, so a status write never loops back into a reconcile.
func needsReconcile(old, cur metav1.Object) bool {
	if old.GetGeneration() != cur.GetGeneration() {
		return true
	}
	if (old.GetDeletionTimestamp() == nil) != (cur.GetDeletionTimestamp() == nil) {
		return true
	}
	if !sameMap(old.GetAnnotations(), cur.GetAnnotations(), ownAnnotations) {
		return true
	}
	return !sameMap(old.GetLabels(), cur.GetLabels(), ownLabels)
}

func sameMap(a, b map[string]string, ignore map[string]bool) bool {
	for k, v := range a {
		if !ignore[k] {
			if w, ok := b[k]; !ok || w != v {
				return false
			}
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok && !ignore[k] {
			return false
		}
	}
	return true
}

// cacheKey is an object's key in an informer's cache.
func cacheKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// cachedInstance is the instance from its kind's informer cache, a copy the
// caller may change, and the graph that serves it.
func cachedInstance(t *graphTable, key state.InstanceKey) (*served, *unstructured.Unstructured, error) {
	s, err := t.servedFor(key)
	if err != nil {
		return nil, nil, err
	}
	obj, ok, err := s.inf.GetIndexer().GetByKey(cacheKey(key.Namespace, key.Name))
	if err != nil || !ok {
		return nil, nil, fmt.Errorf("instance %s is not in the cache (deleted?)", key)
	}
	u, ok := instanceObject(obj)
	if !ok {
		return nil, nil, fmt.Errorf("instance %s: unexpected cached type %T", key, obj)
	}
	return s, u, nil
}
