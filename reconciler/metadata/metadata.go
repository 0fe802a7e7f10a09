// Package metadata holds the labels, annotations and finalizer kroscope puts on
// instances and their children, and the Labeler that stamps them.
package metadata

import (
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/types"
)

// The finalizer kroscope adds to every instance it manages. It is kro's own,
// so kroscope and kro can take over each other's instances.
const Finalizer = "kro.run/finalizer"

// Label keys. The kro.run/ ones match kro's so both tools recognise the
// objects; ManagedByLabel says which of the two wrote them.
const (
	OwnedLabel             = "kro.run/owned"
	InstanceIDLabel        = "kro.run/instance-id"
	InstanceNameLabel      = "kro.run/instance-name"
	InstanceNamespaceLabel = "kro.run/instance-namespace"
	NodeIDLabel            = "kro.run/node-id"
	// CollectionIndexLabel and CollectionSizeLabel mark an item of a forEach
	// collection: its position and how many items the collection has.
	CollectionIndexLabel = "kro.run/collection-index"
	CollectionSizeLabel  = "kro.run/collection-size"
	GraphNameLabel       = "kro.run/resource-graph-definition-name"
	ManagedByLabel       = "app.kubernetes.io/managed-by"
	ManagedByValue       = "kroscope"
	// KroManagedByValue is what kro itself writes in ManagedByLabel.
	KroManagedByValue = "kro"
	// LabelPrefix is reserved: templates must not set labels under it.
	LabelPrefix = "kro.run/"
)

// FieldManager is kroscope's server-side apply field manager.
const FieldManager = "kroscope"

// Labeler returns the labels to stamp on an object.
type Labeler interface {
	Labels() map[string]string
}

// Labels is a fixed label set; it implements Labeler.
type Labels map[string]string

// Labels returns a copy of the set.
func (l Labels) Labels() map[string]string { return maps.Clone(map[string]string(l)) }

// Merge returns a Labeler with the labels of every given labeler; later
// labelers win on conflicting keys.
func Merge(ls ...Labeler) Labeler {
	out := Labels{}
	for _, l := range ls {
		if l == nil {
			continue
		}
		maps.Copy(out, l.Labels())
	}
	return out
}

// NewGraphLabeler returns the labels for instances of the named graph (the
// "instance labeler" NewController takes).
func NewGraphLabeler(graphName string) Labeler {
	return Labels{
		OwnedLabel:     "true",
		GraphNameLabel: graphName,
		ManagedByLabel: ManagedByValue,
	}
}

// InstanceRef names the instance a child belongs to.
type InstanceRef struct {
	UID       types.UID
	Name      string
	Namespace string
}

// ChildLabels returns the labels that mark a child of an instance. NodeID is
// the resource id in the graph.
func ChildLabels(inst InstanceRef, nodeID string) map[string]string {
	l := map[string]string{
		OwnedLabel:        "true",
		InstanceIDLabel:   string(inst.UID),
		InstanceNameLabel: inst.Name,
		NodeIDLabel:       nodeID,
		ManagedByLabel:    ManagedByValue,
	}
	if inst.Namespace != "" {
		l[InstanceNamespaceLabel] = inst.Namespace
	}
	return l
}

// OwnedBy reports whether labels prove the object belongs to the instance
// with the given UID. Nothing is ever deleted unless this holds.
func OwnedBy(labels map[string]string, uid types.UID) bool {
	return uid != "" && labels[OwnedLabel] == "true" && labels[InstanceIDLabel] == string(uid)
}

// Owner describes who, by its labels, owns an object: "" when nobody does.
func Owner(labels map[string]string) string {
	id := labels[InstanceIDLabel]
	if id == "" {
		return ""
	}
	name := labels[InstanceNameLabel]
	if ns := labels[InstanceNamespaceLabel]; ns != "" {
		name = ns + "/" + name
	}
	return fmt.Sprintf("%s (uid %s)", name, id)
}

// DesiredHashAnnotation holds a hash of the object kroscope last applied to a
// child. When it matches the newly rendered object and the live object still
// holds every desired value, the apply is skipped: a converged instance then
// costs no write at all.
const DesiredHashAnnotation = "kroscope.dev/desired-hash"

// IsChildLabel reports whether key is one of the labels kroscope stamps on
// children (removed when an instance orphans them).
func IsChildLabel(key string) bool {
	switch key {
	case OwnedLabel, InstanceIDLabel, InstanceNameLabel, InstanceNamespaceLabel, NodeIDLabel, GraphNameLabel,
		CollectionIndexLabel, CollectionSizeLabel:
		return true
	}
	return false
}

// ServiceAccountUser is the user name Kubernetes gives a ServiceAccount.
func ServiceAccountUser(namespace, name string) string {
	return "system:serviceaccount:" + namespace + ":" + name
}
