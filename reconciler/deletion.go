package reconciler

import (
	"fmt"
	"slices"
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
	"github.com/kroscope/kroscope/reconciler/requeue"
)

// deletion removes the instance's children and then its finalizer. It
// needs no CEL: children are found by their instance-id and node-id labels,
// so an instance whose dependencies or external refs vanished can always
// finish deleting.
func (r *run) deletion() error {
	r.initDetails()
	r.out.state = InstanceStateDeleting
	if !slices.Contains(r.inst.GetFinalizers(), metadata.Finalizer) {
		r.out.message = "being deleted; kroscope's finalizer is already removed"
		return nil
	}
	policy, err := r.deletionPolicy()
	if err != nil {
		r.out.message = err.Error()
		r.writeStatusBestEffort()
		return requeue.None(err)
	}
	present, gvrs, failed := r.findChildren()
	if failed {
		return r.finishDeletionPass()
	}
	if r.observing() {
		for id := range present {
			r.obs.details[id].State = ResourceStatePendingDeletion
		}
		r.out.message = "being deleted (observing: kroscope does not delete)"
		return nil
	}
	done := false
	if policy == DeletionPolicyOrphan {
		done = r.orphanChildren(present, gvrs)
	} else {
		done = r.deleteChildren(present, gvrs)
	}
	if !done || r.hasErrorDetail() {
		return r.finishDeletionPass()
	}
	return r.release(policy)
}

// deletionPolicy is the configured policy, Delete when none is.
func (r *run) deletionPolicy() (string, error) {
	switch policy := r.c.cfg.DeletionPolicy; policy {
	case "":
		return DeletionPolicyDelete, nil
	case DeletionPolicyDelete, DeletionPolicyOrphan:
		return policy, nil
	default:
		return "", fmt.Errorf("unknown deletion policy %q: use %q or %q", policy, DeletionPolicyDelete, DeletionPolicyOrphan)
	}
}

// orphanChildren takes kroscope's marks off every child found, keeping the
// objects; it reports whether all of them were orphaned.
func (r *run) orphanChildren(present map[string][]unstructured.Unstructured, gvrs map[string]schema.GroupVersionResource) bool {
	failed := false
	for _, id := range r.c.rg.TopologicalOrder {
		d := r.obs.details[id]
		for i := range present[id] {
			if err := r.orphan(gvrs[id], &present[id][i]); err != nil {
				r.noteErr(err)
				d.State, d.Err = ResourceStateError, fmt.Errorf("resource %s: %w", id, err)
				failed = true
			}
		}
		if !failed && len(present[id]) > 0 {
			d.State, d.WaitingFor = ResourceStateDeleted, "orphaned: kept without kroscope's labels and owner reference"
		}
	}
	return !failed
}

// deleteChildren deletes every member, wave by wave; it reports whether
// all of them are gone.
func (r *run) deleteChildren(present map[string][]unstructured.Unstructured, gvrs map[string]schema.GroupVersionResource) bool {
	members, err := r.deletionMembers(present, gvrs)
	if err != nil {
		r.noteErr(err)
		r.out.orphanErrs = append(r.out.orphanErrs, err.Error())
		return false
	}
	return r.deleteWaves(members)
}

// release removes kroscope's finalizer once the children are dealt with.
func (r *run) release(policy string) error {
	if err := r.removeFinalizer(); err != nil {
		r.noteErr(err)
		if apierrors.IsConflict(err) {
			return requeue.Now(err)
		}
		r.out.message = err.Error()
		return err
	}
	r.out.gone = true
	r.c.recreated.forget(r.uid())
	r.out.message = "children deleted; finalizer removed"
	if policy == DeletionPolicyOrphan {
		r.out.message = "children orphaned; finalizer removed"
	}
	r.event("Normal", "Deleted", r.out.message)
	return nil
}

// findChildren lists every resource's labelled objects (see findChild),
// records each resource's verdict, and reports whether one could not be
// listed.
func (r *run) findChildren() (map[string][]unstructured.Unstructured, map[string]schema.GroupVersionResource, bool) {
	present := map[string][]unstructured.Unstructured{}
	gvrs := map[string]schema.GroupVersionResource{}
	failed := false
	for _, id := range r.c.rg.TopologicalOrder {
		out, gvr, objs := r.findChild(r.c.rg.Resources[id])
		r.record(id, out)
		failed = failed || out.state == ResourceStateError
		if len(objs) > 0 {
			present[id], gvrs[id] = objs, gvr
		}
	}
	return present, gvrs, failed
}

// findChild is the verdict of one resource at deletion, with the objects
// still there: PENDING_DELETION while some are, DELETED when none is (or
// its kind is gone, and its objects with it). External refs are SKIPPED:
// they are never deleted.
func (r *run) findChild(res *graph.Resource) (result, schema.GroupVersionResource, []unstructured.Unstructured) {
	if res.External {
		return result{verdict: verdict{state: ResourceStateSkipped, reason: "external reference: never deleted"}}, schema.GroupVersionResource{}, nil
	}
	gvr, _, err := r.resolveGVR(res)
	if err != nil {
		if meta.IsNoMatchError(err) || strings.Contains(err.Error(), "is not served") {
			return result{verdict: verdict{state: ResourceStateDeleted}}, gvr, nil
		}
		return result{verdict: errored(err)}, gvr, nil
	}
	objs, err := r.ownedChildren(gvr, res.ID)
	if err != nil {
		r.noteErr(err)
		return result{verdict: errored(fmt.Errorf("resource %s: %w", res.ID, err))}, gvr, nil
	}
	if len(objs) == 0 {
		return result{verdict: verdict{state: ResourceStateDeleted}}, gvr, nil
	}
	out := result{verdict: verdict{state: ResourceStatePendingDeletion}}
	if res.IsCollection() {
		// Every item is found by its labels and deleted with the rest.
		items := make([]*unstructured.Unstructured, len(objs))
		for i := range objs {
			items[i] = &objs[i]
		}
		out.observed = listObject(items)
		return out, gvr, objs
	}
	out.observed = &objs[0]
	out.name, out.namespace = objs[0].GetName(), objs[0].GetNamespace()
	return out, gvr, objs
}

// ownedChildren lists the objects whose labels prove they are this
// instance's node id.
func (r *run) ownedChildren(gvr schema.GroupVersionResource, id string) ([]unstructured.Unstructured, error) {
	objs, err := r.listChildren(gvr, id)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(objs, func(o unstructured.Unstructured) bool {
		return !r.provenOwned(&o)
	}), nil
}

// deletionMembers is everything deletion removes: the members the
// ApplySet inventory lists (children of resources that left the graph
// included) and the children found by their node labels (written before
// kroscope kept an inventory), each once, each provenOwned.
func (r *run) deletionMembers(present map[string][]unstructured.Unstructured, gvrs map[string]schema.GroupVersionResource) ([]member, error) {
	inv, err := r.graphInventory()
	if err != nil {
		return nil, fmt.Errorf("deletion blocked: %w", err)
	}
	members, err := r.listMembers(inv)
	if err != nil {
		return nil, err
	}
	seen := map[types.UID]bool{}
	for _, m := range members {
		seen[m.obj.GetUID()] = true
	}
	for _, id := range r.c.rg.TopologicalOrder {
		for i := range present[id] {
			if o := &present[id][i]; !seen[o.GetUID()] {
				seen[o.GetUID()] = true
				members = append(members, member{gvr: gvrs[id], obj: o})
			}
		}
	}
	return members, nil
}

// deleteWaves deletes the members one apply-order wave at a time, highest
// first, as kro does: a wave starts only when the one before it is gone.
// Objects without finalizers go at once, so one pass moves through as
// many waves as it can. It reports whether every member is gone.
func (r *run) deleteWaves(members []member) bool {
	for len(members) > 0 {
		top := 0
		for _, m := range members {
			top = max(top, r.memberOrder(m))
		}
		var wave, rest []member
		for _, m := range members {
			if r.memberOrder(m) == top {
				wave = append(wave, m)
			} else {
				rest = append(rest, m)
			}
		}
		for _, m := range wave {
			r.deleteMember(m)
		}
		var still []member
		for _, m := range wave {
			cur, err := r.objs.Get(r.ctx, m.gvr, m.obj.GetNamespace(), m.obj.GetName())
			switch {
			case apierrors.IsNotFound(err):
			case err != nil:
				r.noteErr(err)
				r.memberFailed(m, fmt.Errorf("reading %s: %w", objectName(m.obj), err))
				still = append(still, m)
			case cur.GetUID() == m.obj.GetUID():
				still = append(still, member{gvr: m.gvr, obj: cur})
			}
		}
		r.markWaves(still, rest, top)
		if len(still) > 0 {
			return false
		}
		members = rest
	}
	return true
}

// deleteMember deletes one member unless it is already terminating, and
// reports one that outlives the grace time.
func (r *run) deleteMember(m member) {
	o := m.obj
	if ts := o.GetDeletionTimestamp(); ts != nil {
		grace := r.c.cfg.DeletionGraceTimeDuration
		if grace > 0 && r.opts.Now().Sub(ts.Time) > grace {
			r.memberFailed(m, fmt.Errorf("deletion has taken longer than %s: %s is still present (finalizers: %s)",
				grace, objectName(o), strings.Join(o.GetFinalizers(), ", ")))
		}
		return
	}
	if err := r.deleteObject(m.gvr, o); err != nil {
		r.noteErr(err)
		r.memberFailed(m, err)
	}
}

// memberDetail is the detail of a member's node, nil for a member whose
// resource is no longer in the graph.
func (r *run) memberDetail(m member) *ResourceDetail {
	return r.obs.details[m.obj.GetLabels()[metadata.NodeIDLabel]]
}

func (r *run) memberFailed(m member, err error) {
	if d := r.memberDetail(m); d != nil {
		d.State, d.Err = ResourceStateError, fmt.Errorf("resource %s: %w", d.ID, err)
		return
	}
	r.out.orphanErrs = append(r.out.orphanErrs, err.Error())
}

// markWaves sets the resources' states after a wave: DELETING for the
// members of wave top still present, PENDING_DELETION for later waves,
// DELETED for resources with nothing left.
func (r *run) markWaves(still, rest []member, top int) {
	left := map[string]bool{}
	// The blockers are named by resource id, as everywhere else on screen;
	// an object whose resource left the graph has no id, so by its name.
	var names []string
	for _, m := range still {
		if d := r.memberDetail(m); d != nil {
			if !slices.Contains(names, d.ID) {
				names = append(names, d.ID)
			}
		} else {
			names = append(names, objectName(m.obj))
		}
		if d := r.memberDetail(m); d != nil && d.State != ResourceStateError {
			left[d.ID] = true
			d.State, d.WaitingFor = ResourceStateDeleting, "deleting "+objectName(m.obj)
			if why := heldBy([]unstructured.Unstructured{*m.obj}); why != "" {
				d.WaitingFor = why // the finalizer the operator must look at
			}
		}
	}
	r.out.otherLeft = 0
	for _, m := range still {
		if r.memberDetail(m) == nil {
			r.out.otherLeft++
		}
	}
	for _, m := range rest {
		d := r.memberDetail(m)
		if d == nil {
			r.out.otherLeft++
			continue
		}
		left[d.ID] = true
		if d.State != ResourceStateError && len(still) > 0 {
			d.State = ResourceStatePendingDeletion
			d.WaitingFor = fmt.Sprintf("waiting for %s to be deleted first (apply-order wave %d)", strings.Join(names, ", "), top)
		}
	}
	for _, id := range r.c.rg.TopologicalOrder {
		d := r.obs.details[id]
		if !left[id] && (d.State == ResourceStateDeleting || d.State == ResourceStatePendingDeletion) {
			d.State, d.Err, d.WaitingFor = ResourceStateDeleted, nil, ""
		}
	}
}

// orphan removes kroscope's labels, hash annotation and owner reference
// from a child, keeping the object.
func (r *run) orphan(gvr schema.GroupVersionResource, o *unstructured.Unstructured) error {
	lbls := map[string]any{}
	for k, v := range o.GetLabels() {
		if metadata.IsChildLabel(k) || (k == metadata.ManagedByLabel && v == metadata.ManagedByValue) {
			lbls[k] = nil
		}
	}
	md := map[string]any{
		"resourceVersion": o.GetResourceVersion(),
		"labels":          lbls,
		"annotations":     map[string]any{metadata.DesiredHashAnnotation: nil, metadata.ApplyOrderAnnotation: nil},
	}
	refs := slices.DeleteFunc(o.GetOwnerReferences(), func(ref metav1.OwnerReference) bool { return ref.UID == r.uid() })
	if len(refs) != len(o.GetOwnerReferences()) {
		if len(refs) == 0 {
			md["ownerReferences"] = nil
		} else {
			md["ownerReferences"] = refs
		}
	}
	body, err := client.EncodeJSON(map[string]any{"metadata": md})
	if err != nil {
		return err
	}
	_, err = r.objs.Patch(r.ctx, gvr, o.GetNamespace(), o.GetName(), body, o.GetResourceVersion())
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("orphaning %s: %w", objectName(o), err)
	}
	return nil
}

// finishDeletionPass writes the DELETING status and asks to come back.
func (r *run) finishDeletionPass() error {
	var parts []string
	for _, id := range r.c.rg.ReverseTopologicalOrder() {
		d := r.obs.details[id]
		switch d.State {
		case ResourceStateDeleted, ResourceStateSkipped:
			continue
		case ResourceStateError:
			parts = append(parts, fmt.Sprintf("%s: %v", id, d.Err))
		default:
			parts = append(parts, fmt.Sprintf("%s: %s", id, strings.ToLower(d.State)))
		}
	}
	parts = append(parts, r.out.orphanErrs...)
	if r.out.otherLeft > 0 {
		parts = append(parts, fmt.Sprintf("%d object(s) of resources no longer in the graph: deleting", r.out.otherLeft))
	}
	r.out.message = "deleting: " + strings.Join(parts, "; ")
	if !r.observing() {
		if _, err := r.writeStatus(); err != nil && !apierrors.IsNotFound(err) {
			r.noteErr(err)
			return fmt.Errorf("writing status: %w", err)
		}
	}
	return requeue.After(r.c.cfg.DefaultRequeueDuration, fmt.Errorf("%s", r.out.message))
}
