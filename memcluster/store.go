package memcluster

import (
	"fmt"
	"maps"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"
	"k8s.io/apimachinery/pkg/types"
)

// stored is one version of an object as the cluster keeps it: encoded once
// and then shared, never changed, by the store, the event log and every
// watch queue; each reader decodes its own copy, as a client of a real API
// server does. Keeping decoded objects instead cost a deep copy per version
// per watcher and held every logged version as a map tree: most of the
// demo's memory at 1,000 instances.
//
// The encoding is CBOR (apimachinery's, as the API server speaks it): it
// keeps int64 and float64 apart, so a value reads back as it was written,
// and it is smaller and quicker to decode than JSON.
type stored struct {
	data []byte
	objMeta
}

// objMeta is what the cluster reads of a stored object without decoding it:
// enough for selectors, namespaces and garbage collection.
type objMeta struct {
	namespace, name string
	uid             types.UID
	labels          map[string]string
	owners          []types.UID // owner references' UIDs
	// fields are the kind's own selectable fields beyond name and
	// namespace (only core Events have them here).
	fields map[string]string
}

func metaOf(obj *unstructured.Unstructured) objMeta {
	m := objMeta{namespace: obj.GetNamespace(), name: obj.GetName(), uid: obj.GetUID(), labels: obj.GetLabels()}
	for _, r := range obj.GetOwnerReferences() {
		m.owners = append(m.owners, r.UID)
	}
	if obj.GetAPIVersion() == "v1" && obj.GetKind() == "Event" {
		m.fields = eventFields(obj)
	}
	return m
}

// eventFields are the field selectors the API server supports on core
// Events: the instance screen lists an instance's Events by
// involvedObject.uid.
func eventFields(obj *unstructured.Unstructured) map[string]string {
	f := map[string]string{}
	for _, k := range []string{"kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"} {
		f["involvedObject."+k], _, _ = unstructured.NestedString(obj.Object, "involvedObject", k)
	}
	f["reason"], _, _ = unstructured.NestedString(obj.Object, "reason")
	f["type"], _, _ = unstructured.NestedString(obj.Object, "type")
	f["source"], _, _ = unstructured.NestedString(obj.Object, "source", "component")
	return f
}

// metaCopy returns a copy of s's metadata (sharing its maps, which no one
// changes) that does not keep s's encoded data alive.
func (s *stored) metaCopy() *objMeta {
	m := s.objMeta
	return &m
}

// encode stores obj's current content; obj may change afterwards. prev is
// the version it replaces, if any: its labels and owners are shared when
// they did not change (most writes change status only), so the versions
// the event log keeps do not each hold a copy.
func encode(obj *unstructured.Unstructured, prev *stored) (*stored, error) {
	data, err := direct.Marshal(obj.Object)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("demo cluster: encoding %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err))
	}
	m := metaOf(obj)
	if prev != nil {
		if maps.Equal(m.labels, prev.labels) {
			m.labels = prev.labels
		}
		if slices.Equal(m.owners, prev.owners) {
			m.owners = prev.owners
		}
	}
	return &stored{data: data, objMeta: m}, nil
}

// decode returns a fresh copy of the object, the caller's to change.
func (s *stored) decode() (*unstructured.Unstructured, error) {
	m := map[string]any{}
	if err := direct.Unmarshal(s.data, &m); err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("demo cluster: decoding %s/%s: %w", s.namespace, s.name, err))
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// lookupLocked returns a decoded copy of the stored object at k, if any.
func (c *Cluster) lookupLocked(k *kindInfo, key types.NamespacedName) (*unstructured.Unstructured, bool, error) {
	s, ok := c.objects[k.gvr][key]
	if !ok {
		return nil, false, nil
	}
	obj, err := s.decode()
	if err != nil {
		return nil, false, err
	}
	return obj, true, nil
}
