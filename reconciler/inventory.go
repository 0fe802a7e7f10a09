package reconciler

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
)

// The instance is an ApplySet parent (as kro makes it): its annotations
// record the group-kinds and namespaces of its children, and every child
// carries the part-of label. Pruning and deletion list the members from
// there, so a child of a resource that left the graph (or changed kind) is
// still found, and kro finds kroscope's children the same way.

// applyOrders gives every resource its deletion wave, as kro numbers them:
// the resources nothing depends on form the highest wave, and each
// dependency is one wave below its lowest dependent. Deletion removes the
// highest wave first.
func applyOrders(g *graph.Graph) map[string]int {
	dependents := map[string][]string{}
	for _, id := range g.TopologicalOrder {
		for _, dep := range g.Resources[id].Dependencies {
			dependents[dep] = append(dependents[dep], id)
		}
	}
	// height: 0 for a resource without dependents, else 1 + the highest of
	// its dependents'. Reverse topological order visits dependents first.
	height := map[string]int{}
	top := 0
	for _, id := range g.ReverseTopologicalOrder() {
		h := 0
		for _, d := range dependents[id] {
			h = max(h, height[d]+1)
		}
		height[id] = h
		top = max(top, h)
	}
	out := make(map[string]int, len(height))
	for id, h := range height {
		out[id] = top + 1 - h
	}
	return out
}

// graphHash is the PrunedGraphAnnotation value for g.
func graphHash(g *graph.Graph) string {
	var parts []string
	for _, id := range g.TopologicalOrder {
		if res := g.Resources[id]; !res.External {
			parts = append(parts, id+"="+res.GVK.GroupKind().String())
		}
	}
	slices.Sort(parts)
	sum := sha256.Sum256([]byte(strings.Join(parts, ",")))
	return hex.EncodeToString(sum[:8])
}

// applySet is the instance's ApplySet inventory: what it records, and the
// children that are its members. While the layers run it is written by
// the resources of a layer concurrently, so guarded by mu.
type applySet struct {
	inst  *instance
	io    reach
	g     *graph.Graph
	kinds kinds
	ev    *events
	// graphHash identifies the graph's managed resources (needsPrune);
	// applyOrders are the resources' deletion waves.
	graphHash   string
	applyOrders map[string]int

	mu sync.Mutex
	// inv is what the instance records, written the instance as the last
	// inventory write returned it (nil when none), kept the UIDs of the
	// children this pass applied or found in place.
	inv     metadata.Inventory
	written *unstructured.Unstructured
	kept    map[types.UID]bool
}

// needsPrune reports whether the inventory may hold members of resources
// the graph no longer has: the instance was not yet found clean for this
// graph.
func (a *applySet) needsPrune() bool {
	return a.inst.get().GetAnnotations()[metadata.PrunedGraphAnnotation] != a.graphHash
}

// use makes inv the inventory the layers extend (see graphInventory).
func (a *applySet) use(inv metadata.Inventory) { a.inv = inv }

// latest is the instance as the last inventory write returned it, nil
// when this pass wrote none.
func (a *applySet) latest() *unstructured.Unstructured { return a.written }

// graphInventory is the recorded inventory plus the kind of every resource
// the graph manages: recorded before any child is applied, so a child can
// never exist without its parent knowing its kind.
func (a *applySet) graphInventory() (metadata.Inventory, error) {
	u := a.inst.get()
	inv, err := metadata.ParseInventory(u.GetAnnotations())
	if err != nil {
		return inv, fmt.Errorf("instance %s: ApplySet inventory: %w", objectName(u), err)
	}
	addGraphKinds(&inv, a.g)
	return inv, nil
}

// addGraphKinds adds the kind of every resource g manages to inv.
func addGraphKinds(inv *metadata.Inventory, g *graph.Graph) {
	for _, id := range g.TopologicalOrder {
		if res := g.Resources[id]; !res.External {
			inv.Add(res.GVK.GroupKind(), "", "")
		}
	}
}

// recorded reports whether the instance already records exactly inv
// under its id, with kroscope's or kro's tooling.
func (a *applySet) recorded(inv metadata.Inventory) bool {
	u, id := a.inst.get(), a.inst.applySetID()
	ann := u.GetAnnotations()
	if u.GetLabels()[metadata.ApplySetIDLabel] != id || !strings.HasPrefix(ann[metadata.ApplySetToolingAnnotation], "kro/") {
		return false
	}
	rec, err := metadata.ParseInventory(ann)
	_, hasNS := ann[metadata.ApplySetNamespacesAnnotation]
	_, hasGK := ann[metadata.ApplySetGroupKindsAnnotation]
	return err == nil && hasNS && hasGK && rec.Equal(inv) && ann[metadata.InventoryHashAnnotation] == inv.Hash(id)
}

// patch is the metadata merge patch that records inv.
func (a *applySet) patch(inv metadata.Inventory) map[string]any {
	ann := map[string]any{}
	for k, v := range inv.Annotations(a.inst.applySetID()) {
		ann[k] = v
	}
	return map[string]any{
		"labels":      map[string]any{metadata.ApplySetIDLabel: a.inst.applySetID()},
		"annotations": ann,
	}
}

// recordMember makes sure the inventory covers a child about to be
// applied in a namespace not yet recorded. Resources of one layer run
// concurrently: the write is serialised, and the instance is left alone
// (others read it); the newest instance is kept in written for after the
// layers.
func (a *applySet) recordMember(desired *unstructured.Unstructured) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	u := a.inst.get()
	if !a.inv.Add(desired.GroupVersionKind().GroupKind(), desired.GetNamespace(), u.GetNamespace()) {
		return nil
	}
	body, err := client.EncodeJSON(map[string]any{"metadata": a.patch(a.inv)})
	if err != nil {
		return err
	}
	prev := u.GetResourceVersion()
	if a.written != nil {
		prev = a.written.GetResourceVersion()
	}
	out, err := a.io.objs.Patch(a.io.ctx, a.inst.resource(), u.GetNamespace(), u.GetName(), body, prev)
	if err != nil {
		return fmt.Errorf("recording %s in the inventory of instance %s: %w", objectName(desired), objectName(u), err)
	}
	a.written = out
	return nil
}

// keepMember notes a child this pass applied or found in place: inventory
// prune leaves it alone.
func (a *applySet) keepMember(u *unstructured.Unstructured) {
	if u == nil {
		return
	}
	a.mu.Lock()
	if a.kept == nil {
		a.kept = map[types.UID]bool{}
	}
	a.kept[u.GetUID()] = true
	a.mu.Unlock()
}

// member is an object the inventory lists for this instance.
type member struct {
	gvr schema.GroupVersionResource
	obj *unstructured.Unstructured
}

// provenOwned reports whether o is this instance's child beyond doubt: its
// labels name the instance and its ApplySet, no other object controls it,
// and either it carries an owner reference to the instance or kroscope's or
// kro's own field manager wrote its instance-id label. An object that
// merely copied the labels fails the last test and is never deleted.
func (a *applySet) provenOwned(o *unstructured.Unstructured) bool {
	l := o.GetLabels()
	uid := a.inst.uid()
	if !metadata.OwnedBy(l, uid) {
		return false
	}
	if p := l[metadata.ApplySetPartOfLabel]; p != "" && p != a.inst.applySetID() {
		return false
	}
	refOK := false
	for _, ref := range o.GetOwnerReferences() {
		if ref.UID == uid {
			refOK = true
		} else if ref.Controller != nil && *ref.Controller {
			return false
		}
	}
	return refOK || metadata.WroteInstanceLabel(o.GetManagedFields())
}

// nodeChildren lists the objects of gvr labelled as this instance's node
// id, in every namespace, or only the instance's when the identity may not
// list cluster-wide.
func (a *applySet) nodeChildren(gvr schema.GroupVersionResource, nodeID string) ([]unstructured.Unstructured, error) {
	sel := labels.SelectorFromSet(labels.Set{
		metadata.InstanceIDLabel: string(a.inst.uid()),
		metadata.NodeIDLabel:     nodeID,
	}).String()
	opts := metav1.ListOptions{LabelSelector: sel}
	list, err := a.io.objs.List(a.io.ctx, gvr, "", opts)
	if ns := a.inst.get().GetNamespace(); apierrors.IsForbidden(err) && ns != "" {
		list, err = a.io.objs.List(a.io.ctx, gvr, ns, opts)
	}
	if apierrors.IsNotFound(err) {
		return nil, nil // the kind is gone, so are its objects
	}
	if err != nil {
		return nil, fmt.Errorf("listing %s of node %s: %w", gvr.GroupResource(), nodeID, err)
	}
	return list.Items, nil
}

// ownedChildren are the nodeChildren whose labels prove they are this
// instance's.
func (a *applySet) ownedChildren(gvr schema.GroupVersionResource, nodeID string) ([]unstructured.Unstructured, error) {
	objs, err := a.nodeChildren(gvr, nodeID)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(objs, func(o unstructured.Unstructured) bool {
		return !a.provenOwned(&o)
	}), nil
}

// listMembers lists the objects carrying the instance's part-of label in
// every recorded kind, in the instance's namespace and the recorded
// additional ones (cluster-wide for cluster-scoped kinds), keeping only
// those provenOwned. A kind no longer served has no members.
func (a *applySet) listMembers(inv metadata.Inventory) ([]member, error) {
	sel := metadata.ApplySetPartOfLabel + "=" + a.inst.applySetID()
	namespaces := slices.Clone(inv.Namespaces)
	ns := a.inst.get().GetNamespace()
	if ns != "" && !slices.Contains(namespaces, ns) {
		namespaces = append(namespaces, ns)
	}
	if ns == "" && !slices.Contains(namespaces, metav1.NamespaceDefault) {
		namespaces = append(namespaces, metav1.NamespaceDefault) // kro's fallback namespace
	}
	var out []member
	for _, gk := range inv.GroupKinds {
		gvr, namespaced, err := a.kinds.groupKind(gk)
		if err != nil {
			return nil, err
		}
		if gvr.Resource == "" {
			continue
		}
		scopes := []string{""}
		if namespaced {
			scopes = namespaces
		}
		for _, ns := range scopes {
			list, err := a.io.objs.List(a.io.ctx, gvr, ns, metav1.ListOptions{LabelSelector: sel})
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				a.io.errs.note(err)
				return nil, fmt.Errorf("listing the instance's %s in %q: %w", gvr.GroupResource(), ns, err)
			}
			for i := range list.Items {
				if o := &list.Items[i]; a.provenOwned(o) {
					out = append(out, member{gvr: gvr, obj: o})
				}
			}
		}
	}
	return out, nil
}

// prune deletes the members this pass did not keep (children of a
// resource no longer in the graph, or of one whose kind changed), highest
// apply-order first, and then shrinks the inventory to what is left. It
// reports whether something is still on its way out.
func (a *applySet) prune() (bool, error) {
	members, err := a.listMembers(a.inv)
	if err != nil {
		return false, err
	}
	var orphans []member
	keep := metadata.Inventory{}
	for _, m := range members {
		if a.kept[m.obj.GetUID()] {
			keep.Add(m.obj.GroupVersionKind().GroupKind(), m.obj.GetNamespace(), a.inst.get().GetNamespace())
			continue
		}
		orphans = append(orphans, m)
	}
	slices.SortStableFunc(orphans, func(x, y member) int { return a.memberOrder(y) - a.memberOrder(x) })
	leaving := false
	for _, m := range orphans {
		if m.obj.GetDeletionTimestamp() != nil {
			leaving = true
			continue
		}
		if err := deleteObject(a.io, m.gvr, m.obj); err != nil {
			return leaving, err
		}
		leaving = true
		a.ev.event("Normal", "Pruned", fmt.Sprintf("deleted %s (resource %q is no longer in the graph as this kind)",
			objectName(m.obj), m.obj.GetLabels()[metadata.NodeIDLabel]))
	}
	if leaving {
		return true, nil
	}
	// Nothing left to prune: the inventory shrinks to the graph's kinds and
	// the namespaces its children are in.
	shrunk := keep
	addGraphKinds(&shrunk, a.g)
	md := a.patch(shrunk)
	md["annotations"].(map[string]any)[metadata.PrunedGraphAnnotation] = a.graphHash
	a.inv = shrunk
	return false, a.inst.patch(md)
}

// memberOrder is a member's deletion wave: its apply-order annotation, or
// for a child written before kroscope recorded it, its node's wave in the
// graph; 0 (last) when neither is known.
func (a *applySet) memberOrder(m member) int {
	if n, err := strconv.Atoi(m.obj.GetAnnotations()[metadata.ApplyOrderAnnotation]); err == nil && n > 0 {
		return n
	}
	if n, ok := a.applyOrders[m.obj.GetLabels()[metadata.NodeIDLabel]]; ok {
		return n
	}
	return 0
}

// deleteObject deletes o, guarded by its UID so a replacement object of the
// same name is never hit.
func deleteObject(io reach, gvr schema.GroupVersionResource, o *unstructured.Unstructured) error {
	uid := o.GetUID()
	policy := metav1.DeletePropagationBackground
	err := io.objs.Delete(io.ctx, gvr, o.GetNamespace(), o.GetName(), metav1.DeleteOptions{
		Preconditions:     &metav1.Preconditions{UID: &uid},
		PropagationPolicy: &policy,
	})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting %s: %w", objectName(o), err)
	}
	return nil
}
