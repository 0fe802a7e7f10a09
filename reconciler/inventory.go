package reconciler

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

// needsPrune reports whether the inventory may hold members of resources
// the graph no longer has: the instance was not yet found clean for this
// graph.
func (r *run) needsPrune() bool {
	return r.inst.GetAnnotations()[metadata.PrunedGraphAnnotation] != r.c.graphHash
}

// applySetID is the instance's ApplySet id.
func (r *run) applySetID() string {
	// The instance's identity does not change within a run: hashed once.
	r.aset.once.Do(func() {
		gvk := r.inst.GroupVersionKind()
		r.aset.id = metadata.ApplySetID(r.inst.GetName(), r.inst.GetNamespace(), gvk.Kind, gvk.Group)
	})
	return r.aset.id
}

// graphInventory is the recorded inventory plus the kind of every resource
// the graph manages: recorded before any child is applied, so a child can
// never exist without its parent knowing its kind.
func (r *run) graphInventory() (metadata.Inventory, error) {
	inv, err := metadata.ParseInventory(r.inst.GetAnnotations())
	if err != nil {
		return inv, fmt.Errorf("instance %s: ApplySet inventory: %w", objectName(r.inst), err)
	}
	for _, id := range r.c.rg.TopologicalOrder {
		if res := r.c.rg.Resources[id]; !res.External {
			inv.Add(res.GVK.GroupKind(), "", "")
		}
	}
	return inv, nil
}

// inventoryWritten reports whether the instance already records exactly
// inv under its id, with kroscope's or kro's tooling.
func (r *run) inventoryWritten(inv metadata.Inventory) bool {
	ann := r.inst.GetAnnotations()
	if r.inst.GetLabels()[metadata.ApplySetIDLabel] != r.applySetID() || !strings.HasPrefix(ann[metadata.ApplySetToolingAnnotation], "kro/") {
		return false
	}
	rec, err := metadata.ParseInventory(ann)
	_, hasNS := ann[metadata.ApplySetNamespacesAnnotation]
	_, hasGK := ann[metadata.ApplySetGroupKindsAnnotation]
	return err == nil && hasNS && hasGK && rec.Equal(inv) && ann[metadata.InventoryHashAnnotation] == inv.Hash(r.applySetID())
}

// inventoryPatch is the metadata merge patch that records inv.
func (r *run) inventoryPatch(inv metadata.Inventory) map[string]any {
	ann := map[string]any{}
	for k, v := range inv.Annotations(r.applySetID()) {
		ann[k] = v
	}
	return map[string]any{
		"labels":      map[string]any{metadata.ApplySetIDLabel: r.applySetID()},
		"annotations": ann,
	}
}

// recordMember makes sure the inventory covers a child about to be
// applied in a namespace not yet recorded. Resources of one layer run
// concurrently: the write is serialised, and r.inst is left alone (others
// read it); the newest instance is kept in invInst for after the layers.
func (r *run) recordMember(desired *unstructured.Unstructured) error {
	r.aset.mu.Lock()
	defer r.aset.mu.Unlock()
	if !r.aset.inv.Add(desired.GroupVersionKind().GroupKind(), desired.GetNamespace(), r.inst.GetNamespace()) {
		return nil
	}
	body, err := client.EncodeJSON(map[string]any{"metadata": r.inventoryPatch(r.aset.inv)})
	if err != nil {
		return err
	}
	prev := r.inst.GetResourceVersion()
	if r.aset.inst != nil {
		prev = r.aset.inst.GetResourceVersion()
	}
	out, err := r.objs.Patch(r.ctx, r.c.gvr, r.inst.GetNamespace(), r.inst.GetName(), body, prev)
	if err != nil {
		return fmt.Errorf("recording %s in the inventory of instance %s: %w", objectName(desired), objectName(r.inst), err)
	}
	r.aset.inst = out
	return nil
}

// keepMember notes a child this pass applied or found in place: inventory
// prune leaves it alone.
func (r *run) keepMember(u *unstructured.Unstructured) {
	if u == nil {
		return
	}
	r.aset.mu.Lock()
	if r.aset.kept == nil {
		r.aset.kept = map[types.UID]bool{}
	}
	r.aset.kept[u.GetUID()] = true
	r.aset.mu.Unlock()
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
func (r *run) provenOwned(o *unstructured.Unstructured) bool {
	l := o.GetLabels()
	if !metadata.OwnedBy(l, r.uid()) {
		return false
	}
	if p := l[metadata.ApplySetPartOfLabel]; p != "" && p != r.applySetID() {
		return false
	}
	refOK := false
	for _, ref := range o.GetOwnerReferences() {
		if ref.UID == r.uid() {
			refOK = true
		} else if ref.Controller != nil && *ref.Controller {
			return false
		}
	}
	return refOK || metadata.WroteInstanceLabel(o.GetManagedFields())
}

// listMembers lists the objects carrying the instance's part-of label in
// every recorded kind, in the instance's namespace and the recorded
// additional ones (cluster-wide for cluster-scoped kinds), keeping only
// those provenOwned. A kind no longer served has no members.
func (r *run) listMembers(inv metadata.Inventory) ([]member, error) {
	sel := metadata.ApplySetPartOfLabel + "=" + r.applySetID()
	namespaces := slices.Clone(inv.Namespaces)
	if ns := r.inst.GetNamespace(); ns != "" && !slices.Contains(namespaces, ns) {
		namespaces = append(namespaces, ns)
	}
	if r.inst.GetNamespace() == "" && !slices.Contains(namespaces, metav1.NamespaceDefault) {
		namespaces = append(namespaces, metav1.NamespaceDefault) // kro's fallback namespace
	}
	var out []member
	for _, gk := range inv.GroupKinds {
		gvr, namespaced, err := r.mapGroupKind(gk)
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
			list, err := r.objs.List(r.ctx, gvr, ns, metav1.ListOptions{LabelSelector: sel})
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				r.noteErr(err)
				return nil, fmt.Errorf("listing the instance's %s in %q: %w", gvr.GroupResource(), ns, err)
			}
			for i := range list.Items {
				if o := &list.Items[i]; r.provenOwned(o) {
					out = append(out, member{gvr: gvr, obj: o})
				}
			}
		}
	}
	return out, nil
}

// mapGroupKind finds the resource of a group-kind; an empty GVR when the
// kind is not served (its objects are gone with it).
func (r *run) mapGroupKind(gk schema.GroupKind) (schema.GroupVersionResource, bool, error) {
	for _, id := range r.c.rg.TopologicalOrder {
		if res := r.c.rg.Resources[id]; res.GVK.GroupKind() == gk {
			gvr, namespaced, err := r.resolveGVR(res)
			if err != nil && strings.Contains(err.Error(), "is not served") {
				return schema.GroupVersionResource{}, false, nil
			}
			return gvr, namespaced, err
		}
	}
	m := r.c.clientSet.RESTMapper()
	if m == nil {
		return schema.GroupVersionResource{}, false, fmt.Errorf("no REST mapper to find the kind %s recorded in the inventory", gk)
	}
	mapping, err := m.RESTMapping(gk)
	if meta.IsNoMatchError(err) {
		m.Reset()
		mapping, err = m.RESTMapping(gk)
	}
	if meta.IsNoMatchError(err) {
		return schema.GroupVersionResource{}, false, nil
	}
	if err != nil {
		return schema.GroupVersionResource{}, false, fmt.Errorf("mapping %s recorded in the inventory: %w", gk, err)
	}
	return mapping.Resource, mapping.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

// settledForPrune reports whether this pass saw every resource through:
// nothing waits for data, nothing failed. Only then is a member that was
// not applied really an orphan (kro's rule).
func (r *run) settledForPrune() bool {
	for _, id := range r.c.rg.TopologicalOrder {
		switch r.obs.details[id].State {
		case ResourceStateSynced, ResourceStateSkipped, ResourceStateCreated, ResourceStateUpdating, ResourceStateWaitingForReadiness:
		default:
			return false
		}
	}
	return true
}

// pruneInventory deletes the members this pass did not keep (children of a
// resource no longer in the graph, or of one whose kind changed), highest
// apply-order first, and then shrinks the inventory to what is left. It
// reports whether something is still on its way out.
func (r *run) pruneInventory() (bool, error) {
	members, err := r.listMembers(r.aset.inv)
	if err != nil {
		return false, err
	}
	var orphans []member
	keep := metadata.Inventory{}
	for _, m := range members {
		if r.aset.kept[m.obj.GetUID()] {
			keep.Add(m.obj.GroupVersionKind().GroupKind(), m.obj.GetNamespace(), r.inst.GetNamespace())
			continue
		}
		orphans = append(orphans, m)
	}
	slices.SortStableFunc(orphans, func(a, b member) int { return r.memberOrder(b) - r.memberOrder(a) })
	leaving := false
	for _, m := range orphans {
		if m.obj.GetDeletionTimestamp() != nil {
			leaving = true
			continue
		}
		if err := r.deleteObject(m.gvr, m.obj); err != nil {
			return leaving, err
		}
		leaving = true
		r.event("Normal", "Pruned", fmt.Sprintf("deleted %s (resource %q is no longer in the graph as this kind)",
			objectName(m.obj), m.obj.GetLabels()[metadata.NodeIDLabel]))
	}
	if leaving {
		return true, nil
	}
	// Nothing left to prune: the inventory shrinks to the graph's kinds and
	// the namespaces its children are in.
	shrunk := keep
	for _, id := range r.c.rg.TopologicalOrder {
		if res := r.c.rg.Resources[id]; !res.External {
			shrunk.Add(res.GVK.GroupKind(), "", "")
		}
	}
	md := r.inventoryPatch(shrunk)
	md["annotations"].(map[string]any)[metadata.PrunedGraphAnnotation] = r.c.graphHash
	r.aset.inv = shrunk
	return false, r.patchInstance(md)
}

// memberOrder is a member's deletion wave: its apply-order annotation, or
// for a child written before kroscope recorded it, its node's wave in the
// graph; 0 (last) when neither is known.
func (r *run) memberOrder(m member) int {
	if n, err := strconv.Atoi(m.obj.GetAnnotations()[metadata.ApplyOrderAnnotation]); err == nil && n > 0 {
		return n
	}
	if n, ok := r.c.applyOrders[m.obj.GetLabels()[metadata.NodeIDLabel]]; ok {
		return n
	}
	return 0
}
