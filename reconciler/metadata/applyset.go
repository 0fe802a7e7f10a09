package metadata

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The ApplySet (KEP-3659) keys kro uses as its inventory: the instance is
// the parent, every child carries the part-of label with the parent's id.
// kroscope writes the same keys in the same formats, so each tool finds,
// prunes and deletes the other's children.
const (
	ApplySetIDLabel     = "applyset.kubernetes.io/id"
	ApplySetPartOfLabel = "applyset.kubernetes.io/part-of"

	ApplySetToolingAnnotation    = "applyset.kubernetes.io/tooling"
	ApplySetGroupKindsAnnotation = "applyset.kubernetes.io/contains-group-kinds"
	// ApplySetNamespacesAnnotation lists the namespaces of members other
	// than the parent's own.
	ApplySetNamespacesAnnotation = "applyset.kubernetes.io/additional-namespaces"
	// InventoryHashAnnotation guards the two lists above against edits.
	InventoryHashAnnotation = "internal.kro.run/applyset-inventory-hash"
)

// Tooling is kroscope's ApplySet tooling value. kro only deletes an
// inventory whose tooling starts with "kro/"; the semver build metadata
// says that kroscope wrote it.
const Tooling = "kro/" + KroVersion + "+kroscope"

// ApplySetID is the ApplySet id of a parent object:
// applyset-<base64url(sha256("name.namespace.Kind.group"))>-v1, as the KEP
// and kro define it.
func ApplySetID(name, namespace, kind, group string) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{name, namespace, kind, group}, ".")))
	return "applyset-" + base64.RawURLEncoding.EncodeToString(sum[:]) + "-v1"
}

// Inventory is what an ApplySet parent records: the group-kinds and the
// additional namespaces of its members. Both are kept sorted and unique.
type Inventory struct {
	GroupKinds []schema.GroupKind
	Namespaces []string
}

// Add records a member of kind gk in namespace ns ("" for a cluster-scoped
// one, or the parent's namespace, which is never listed). It reports
// whether the inventory grew.
func (inv *Inventory) Add(gk schema.GroupKind, ns, parentNamespace string) bool {
	grew := inv.addKind(gk)
	if ns != parentNamespace && inv.addNamespace(ns) {
		grew = true
	}
	return grew
}

func (inv *Inventory) addKind(gk schema.GroupKind) bool {
	if gk.Kind == "" || slices.Contains(inv.GroupKinds, gk) {
		return false
	}
	inv.GroupKinds = append(inv.GroupKinds, gk)
	slices.SortFunc(inv.GroupKinds, func(a, b schema.GroupKind) int { return strings.Compare(gkString(a), gkString(b)) })
	return true
}

func (inv *Inventory) addNamespace(ns string) bool {
	if ns == "" || slices.Contains(inv.Namespaces, ns) {
		return false
	}
	inv.Namespaces = append(inv.Namespaces, ns)
	slices.Sort(inv.Namespaces)
	return true
}

// Union returns an inventory with the members of both.
func (inv Inventory) Union(o Inventory) Inventory {
	out := Inventory{GroupKinds: slices.Clone(inv.GroupKinds), Namespaces: slices.Clone(inv.Namespaces)}
	for _, gk := range o.GroupKinds {
		out.addKind(gk)
	}
	for _, ns := range o.Namespaces {
		out.addNamespace(ns)
	}
	return out
}

// Equal reports whether both record the same members.
func (inv Inventory) Equal(o Inventory) bool {
	return slices.Equal(inv.GroupKinds, o.GroupKinds) && slices.Equal(inv.Namespaces, o.Namespaces)
}

func gkString(gk schema.GroupKind) string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Kind + "." + gk.Group
}

// GroupKindsValue is the contains-group-kinds value: sorted "Kind.group"
// (Kind alone for the core group), comma-separated.
func (inv Inventory) GroupKindsValue() string {
	parts := make([]string, 0, len(inv.GroupKinds))
	for _, gk := range inv.GroupKinds {
		parts = append(parts, gkString(gk))
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// NamespacesValue is the additional-namespaces value.
func (inv Inventory) NamespacesValue() string {
	ns := slices.Clone(inv.Namespaces)
	slices.Sort(ns)
	return strings.Join(ns, ",")
}

// Hash is the inventory-hash value for the parent with ApplySet id:
// "sha256:" + base64url(sha256(id NUL kinds NUL namespaces)), kro's format.
func (inv Inventory) Hash(id string) string {
	payload := id + "\x00" + inv.GroupKindsValue() + "\x00" + inv.NamespacesValue()
	sum := sha256.Sum256([]byte(payload))
	return "sha256:" + base64.RawURLEncoding.EncodeToString(sum[:])
}

// Annotations are the parent annotations recording inv.
func (inv Inventory) Annotations(id string) map[string]string {
	return map[string]string{
		ApplySetToolingAnnotation:    Tooling,
		ApplySetGroupKindsAnnotation: inv.GroupKindsValue(),
		ApplySetNamespacesAnnotation: inv.NamespacesValue(),
		InventoryHashAnnotation:      inv.Hash(id),
	}
}

// ParseInventory reads the inventory recorded in a parent's annotations. A
// parent that records nothing gives an empty inventory; a malformed value
// is an error naming the annotation.
func ParseInventory(annotations map[string]string) (Inventory, error) {
	var inv Inventory
	if raw := annotations[ApplySetGroupKindsAnnotation]; raw != "" {
		for entry := range strings.SplitSeq(raw, ",") {
			entry = strings.TrimSpace(entry)
			kind, group, _ := strings.Cut(entry, ".")
			if kind == "" || strings.ContainsAny(kind, " \t\r\n") {
				return Inventory{}, fmt.Errorf("annotation %s: invalid group-kind %q", ApplySetGroupKindsAnnotation, entry)
			}
			if group != "" {
				if errs := validation.IsDNS1123Subdomain(group); len(errs) > 0 {
					return Inventory{}, fmt.Errorf("annotation %s: invalid group %q: %s", ApplySetGroupKindsAnnotation, group, strings.Join(errs, ", "))
				}
			}
			inv.addKind(schema.GroupKind{Group: group, Kind: kind})
		}
	}
	if raw := annotations[ApplySetNamespacesAnnotation]; raw != "" {
		for ns := range strings.SplitSeq(raw, ",") {
			ns = strings.TrimSpace(ns)
			if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
				return Inventory{}, fmt.Errorf("annotation %s: invalid namespace %q: %s", ApplySetNamespacesAnnotation, ns, strings.Join(errs, ", "))
			}
			inv.addNamespace(ns)
		}
	}
	return inv, nil
}

// HasInventory reports whether a parent carries any ApplySet metadata.
func HasInventory(labels, annotations map[string]string) bool {
	if _, ok := labels[ApplySetIDLabel]; ok {
		return true
	}
	for _, k := range []string{ApplySetToolingAnnotation, ApplySetGroupKindsAnnotation, ApplySetNamespacesAnnotation, InventoryHashAnnotation} {
		if _, ok := annotations[k]; ok {
			return true
		}
	}
	return false
}

// IsInventoryKey reports whether an instance label or annotation key is
// ApplySet inventory metadata (written by kroscope or kro themselves).
func IsInventoryKey(k string) bool {
	switch k {
	case ApplySetIDLabel, ApplySetToolingAnnotation, ApplySetGroupKindsAnnotation, ApplySetNamespacesAnnotation, InventoryHashAnnotation:
		return true
	}
	return false
}

// WroteInstanceLabel reports whether one of the managers kroscope trusts
// (its own, or kro's child applier) set the object's instance-id label,
// according to its managedFields. Someone who copied the labels onto an
// object of their own did not, so this separates real children from
// look-alikes.
func WroteInstanceLabel(fields []metav1.ManagedFieldsEntry) bool {
	for _, e := range fields {
		if e.Manager != FieldManager && e.Manager != KroApplyManager {
			continue
		}
		if e.FieldsV1 == nil {
			continue
		}
		var f map[string]any
		if json.Unmarshal(e.FieldsV1.Raw, &f) != nil {
			continue
		}
		md, _ := f["f:metadata"].(map[string]any)
		lbls, _ := md["f:labels"].(map[string]any)
		if _, ok := lbls["f:"+InstanceIDLabel]; ok {
			return true
		}
	}
	return false
}
