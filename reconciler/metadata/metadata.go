// Package metadata holds the labels, annotations and finalizer kroscope puts on
// instances and their children, and the Labeler that stamps them.
package metadata

import (
	"fmt"
	"maps"
	"strings"

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
	// GraphIDLabel holds the UID of the ResourceGraphDefinition object (kro's
	// definition of the graph id); only set for graphs read from a cluster.
	GraphIDLabel = "kro.run/resource-graph-definition-id"
	// KroVersionLabel says which kro release wrote the object. kroscope writes
	// KroVersion, the kro release whose behaviour it implements: kro reads
	// nothing from this label, and scripts selecting on kro's version keep
	// finding kroscope's objects. ManagedByLabel tells the two tools apart.
	KroVersionLabel = "kro.run/kro-version"
	// The instance's API group, version and kind, on every child.
	InstanceGroupLabel   = "kro.run/instance-group"
	InstanceVersionLabel = "kro.run/instance-version"
	InstanceKindLabel    = "kro.run/instance-kind"
	ManagedByLabel       = "app.kubernetes.io/managed-by"
	ManagedByValue       = "kroscope"
	// KroManagedByValue is what kro itself writes in ManagedByLabel.
	KroManagedByValue = "kro"
	// LabelPrefix is reserved: templates must not set labels under it.
	LabelPrefix = "kro.run/"
)

// FieldManager is kroscope's server-side apply field manager.
const FieldManager = "kroscope"

// KroVersion is the kro release kroscope follows (labels, inventory format,
// conditions); see KroVersionLabel.
const KroVersion = "v0.9.4"

// kro's field managers: its children are applied by KroApplyManager, the
// instance's labels and finalizer by KroLabelManager and the ApplySet parent
// metadata by KroParentManager. For a child whose labels prove it belongs to
// the same instance, fields these own are not "another owner's": kroscope
// takes them over (adoption), as kro takes over kroscope's.
const (
	KroApplyManager  = "kro.run/applyset"
	KroLabelManager  = "kro.run/labeller"
	KroParentManager = "kro.run/applyset-parent"
)

// IsKroManager reports whether m is one of kro's field managers.
func IsKroManager(m string) bool {
	return m == KroApplyManager || m == KroLabelManager || m == KroParentManager
}

// ReconcileAnnotation on an instance pauses it when its value is
// "suspended" (or kro's legacy "disabled"), in any case.
const ReconcileAnnotation = "kro.run/reconcile"

// Suspended reports whether annotations pause the instance.
func Suspended(annotations map[string]string) bool {
	v := annotations[ReconcileAnnotation]
	return strings.EqualFold(v, "suspended") || strings.EqualFold(v, "disabled")
}

// ApplyOrderAnnotation on a child holds its deletion wave: the highest
// order is deleted first (kro's format: a decimal integer >= 1).
const ApplyOrderAnnotation = "internal.kro.run/apply-order"

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
// "instance labeler" NewController takes). graphID is the definition
// object's UID, "" for a graph read from a file (no id label then).
func NewGraphLabeler(graphName string, graphID types.UID) Labeler {
	l := Labels{
		OwnedLabel:      "true",
		KroVersionLabel: KroVersion,
		GraphNameLabel:  graphName,
		ManagedByLabel:  ManagedByValue,
	}
	if graphID != "" {
		l[GraphIDLabel] = string(graphID)
	}
	return l
}

// InstanceRef names the instance a child belongs to.
type InstanceRef struct {
	UID       types.UID
	Name      string
	Namespace string
	// Group, Version and Kind of the instance (kro's instance-* labels).
	Group, Version, Kind string
}

// ChildLabels returns the labels that mark a child of an instance, kro's
// set with kroscope's managed-by value. NodeID is the resource id in the
// graph.
func ChildLabels(inst InstanceRef, nodeID string) map[string]string {
	l := map[string]string{
		OwnedLabel:           "true",
		KroVersionLabel:      KroVersion,
		InstanceIDLabel:      string(inst.UID),
		InstanceNameLabel:    inst.Name,
		InstanceGroupLabel:   inst.Group,
		InstanceVersionLabel: inst.Version,
		InstanceKindLabel:    inst.Kind,
		NodeIDLabel:          nodeID,
		ManagedByLabel:       ManagedByValue,
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

// PrunedGraphAnnotation on an instance holds a hash of the graph's managed
// resources (ids and kinds) for which its inventory was last found to hold
// no orphans. While it matches, no pass needs to list the inventory: only a
// graph change can leave members behind.
const PrunedGraphAnnotation = "kroscope.dev/pruned-graph"

// IsChildLabel reports whether key is one of the labels kroscope stamps on
// children (removed when an instance orphans them).
func IsChildLabel(key string) bool {
	switch key {
	case OwnedLabel, InstanceIDLabel, InstanceNameLabel, InstanceNamespaceLabel, NodeIDLabel, GraphNameLabel,
		CollectionIndexLabel, CollectionSizeLabel, KroVersionLabel, InstanceGroupLabel, InstanceVersionLabel,
		InstanceKindLabel, ApplySetPartOfLabel:
		return true
	}
	return false
}

// ServiceAccountUser is the user name Kubernetes gives a ServiceAccount.
func ServiceAccountUser(namespace, name string) string {
	return "system:serviceaccount:" + namespace + ":" + name
}
