// Package slim drops the parts of API objects kroscope keeps but never
// reads, so that what it holds for every object of a watch costs as little
// as the object allows.
//
// The big part is managedFields: each entry's fieldsV1 lists every field
// its manager set, one nested map per field, often more than the object's
// own data. kroscope reads only who wrote an object and how (manager,
// operation, subresource, time: kro detection, the apply-conflict check);
// the field sets it needs (whether kroscope's manager set an instance
// label) it reads from lists fetched for that purpose, never from what it
// keeps. So kept objects carry their managedFields without fieldsV1, and
// metadata-only watches drop managedFields altogether.
package slim

import (
	"unique"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
)

// Unstructured removes fieldsV1 from every managedFields entry of u, in
// place (u must be the caller's own copy).
func Unstructured(u *unstructured.Unstructured) {
	md, _ := u.Object["metadata"].(map[string]any)
	entries, _ := md["managedFields"].([]any)
	for i, e := range entries {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		if _, has := m["fieldsV1"]; !has {
			continue
		}
		c := make(map[string]any, len(m))
		for k, v := range m {
			if k != "fieldsV1" {
				c[k] = v
			}
		}
		entries[i] = c
	}
}

// View is u without fieldsV1, sharing everything else with u: for a
// caller that reads or encodes it at once and keeps neither (u must not
// change meanwhile).
func View(u *unstructured.Unstructured) *unstructured.Unstructured {
	md, _ := u.Object["metadata"].(map[string]any)
	entries, has := md["managedFields"].([]any)
	if !has {
		return u
	}
	top := make(map[string]any, len(u.Object))
	for k, v := range u.Object {
		top[k] = v
	}
	meta := make(map[string]any, len(md))
	for k, v := range md {
		meta[k] = v
	}
	slimEntries := make([]any, 0, len(entries))
	for _, e := range entries {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		if _, has := m["fieldsV1"]; has {
			c := make(map[string]any, len(m))
			for k, v := range m {
				if k != "fieldsV1" {
					c[k] = v
				}
			}
			m = c
		}
		slimEntries = append(slimEntries, m)
	}
	meta["managedFields"] = slimEntries
	top["metadata"] = meta
	return &unstructured.Unstructured{Object: top}
}

// WithoutManagedFields returns obj without metadata.managedFields: a
// shallow copy (obj is not changed) when it has them, obj itself when it
// has none. For what is shown or kept for showing: no screen shows them.
func WithoutManagedFields(obj map[string]any) map[string]any {
	md, ok := obj["metadata"].(map[string]any)
	if !ok {
		return obj
	}
	if _, has := md["managedFields"]; !has {
		return obj
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	m := make(map[string]any, len(md))
	for k, v := range md {
		if k != "managedFields" {
			m[k] = v
		}
	}
	out["metadata"] = m
	return out
}

// Transform is an informer transform (cache.TransformFunc) that slims the
// objects an informer stores: unstructured objects lose fieldsV1,
// metadata-only ones keep only what Meta keeps, other objects lose
// managedFields; labels share their strings (see Labels).
func Transform(obj any) (any, error) {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		Unstructured(o)
		if md, ok := o.Object["metadata"].(map[string]any); ok {
			if l, ok := md["labels"].(map[string]any); ok {
				md["labels"] = labelsAny(l)
			}
		}
	case cache.DeletedFinalStateUnknown:
		// Already stored slim, or about to be forgotten.
	case *metav1.PartialObjectMetadata:
		return Meta(o), nil
	case metav1.Object:
		o.SetManagedFields(nil)
		o.SetLabels(Labels(o.GetLabels()))
	}
	return obj, nil
}

// Meta is what a metadata-only watch keeps of an object: its identity, its
// version and its labels. The engine reads nothing else from these
// watches (which instance a child belongs to, and whether the object it
// remembers is still current); annotations, owner references, finalizers
// and managedFields were most of every watched object's cost, held for
// every child of every instance.
func Meta(o *metav1.PartialObjectMetadata) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta: o.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name:            o.Name,
			Namespace:       o.Namespace,
			UID:             o.UID,
			ResourceVersion: o.ResourceVersion,
			Labels:          Labels(o.Labels),
		},
	}
}

// Labels returns l with its strings interned: every child carries the same
// kro.run label keys and graph values, decoded into new strings for each
// object, so thousands of objects held the same text thousands of times.
func Labels(l map[string]string) map[string]string {
	if len(l) == 0 {
		return l
	}
	out := make(map[string]string, len(l))
	for k, v := range l {
		out[unique.Make(k).Value()] = unique.Make(v).Value()
	}
	return out
}

func labelsAny(l map[string]any) map[string]any {
	out := make(map[string]any, len(l))
	for k, v := range l {
		if s, ok := v.(string); ok {
			v = unique.Make(s).Value()
		}
		out[unique.Make(k).Value()] = v
	}
	return out
}
