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
	"time"

	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
	"github.com/kroscope/kroscope/reconciler/requeue"
)

// deletion removes the instance's children and then its finalizer. It
// needs no CEL: children are found by their instance-id and node-id labels,
// so an instance whose dependencies or external refs vanished can always
// finish deleting. Its pass writes each resource's detail; what it
// concludes for the instance goes back to the run (deletionEnd).
type deletion struct {
	obs       *observations
	io        reach
	inst      *instance
	aset      *applySet
	kinds     kinds
	marks     *marks
	ev        *events
	recreated *recreations
	cfg       ReconcileConfig
	g         *graph.Graph
	now       func() time.Time
	// orphanErrs and otherLeft are the errors for, and count of, members
	// whose resource is no longer in the graph.
	orphanErrs []string
	otherLeft  int
}

// deletionEnd is what a deletion pass concludes: the instance's message,
// whether it is gone (its finalizer removed) or blocked by an error,
// whether the status is written (statusNone, statusBestEffort: a failed
// write is only logged, statusRequired: a failed write is the error), and
// the error that tells the queue what to do next.
type deletionEnd struct {
	message       string
	gone, blocked bool
	status        int
	err           error
}

const (
	statusNone = iota
	statusBestEffort
	statusRequired
)

// pass takes the deletion as far as it can go now.
func (d *deletion) pass() deletionEnd {
	if !slices.Contains(d.inst.get().GetFinalizers(), metadata.Finalizer) {
		return deletionEnd{message: "being deleted; kroscope's finalizer is already removed"}
	}
	policy, err := deletionPolicy(d.cfg)
	if err != nil {
		return deletionEnd{message: err.Error(), status: statusBestEffort, err: requeue.None(err)}
	}
	present, gvrs, failed := d.findChildren()
	if failed {
		return d.progress()
	}
	if d.io.observe {
		for id := range present {
			d.obs.detail(id).State = ResourceStatePendingDeletion
		}
		return deletionEnd{message: "being deleted (observing: kroscope does not delete)"}
	}
	done := false
	if policy == DeletionPolicyOrphan {
		done = d.orphanChildren(present, gvrs)
	} else {
		done = d.deleteChildren(present, gvrs)
	}
	if !done || d.obs.hasErrorDetail() {
		return d.progress()
	}
	return d.release(policy)
}

// deletionPolicy is the configured policy, Delete when none is.
func deletionPolicy(cfg ReconcileConfig) (string, error) {
	switch policy := cfg.DeletionPolicy; policy {
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
func (d *deletion) orphanChildren(present map[string][]unstructured.Unstructured, gvrs map[string]schema.GroupVersionResource) bool {
	failed := false
	for _, id := range d.g.TopologicalOrder {
		det := d.obs.detail(id)
		for i := range present[id] {
			if err := d.orphan(gvrs[id], &present[id][i]); err != nil {
				d.io.errs.note(err)
				det.State, det.Err = ResourceStateError, fmt.Errorf("resource %s: %w", id, err)
				failed = true
			}
		}
		if !failed && len(present[id]) > 0 {
			det.State, det.WaitingFor = ResourceStateDeleted, "orphaned: kept without kroscope's labels and owner reference"
		}
	}
	return !failed
}

// deleteChildren deletes every member, wave by wave; it reports whether
// all of them are gone.
func (d *deletion) deleteChildren(present map[string][]unstructured.Unstructured, gvrs map[string]schema.GroupVersionResource) bool {
	members, err := d.members(present, gvrs)
	if err != nil {
		d.io.errs.note(err)
		d.orphanErrs = append(d.orphanErrs, err.Error())
		return false
	}
	return d.deleteWaves(members)
}

// release removes kroscope's finalizer once the children are dealt with.
func (d *deletion) release(policy string) deletionEnd {
	if err := d.marks.removeFinalizer(); err != nil {
		d.io.errs.note(err)
		if apierrors.IsConflict(err) {
			return deletionEnd{err: requeue.Now(err)}
		}
		return deletionEnd{message: err.Error(), err: err}
	}
	d.recreated.forget(d.inst.uid())
	msg := "children deleted; finalizer removed"
	if policy == DeletionPolicyOrphan {
		msg = "children orphaned; finalizer removed"
	}
	d.ev.event("Normal", "Deleted", msg)
	return deletionEnd{message: msg, gone: true}
}

// findChildren lists every resource's labelled objects (see findChild),
// records each resource's verdict, and reports whether one could not be
// listed.
func (d *deletion) findChildren() (map[string][]unstructured.Unstructured, map[string]schema.GroupVersionResource, bool) {
	present := map[string][]unstructured.Unstructured{}
	gvrs := map[string]schema.GroupVersionResource{}
	failed := false
	for _, id := range d.g.TopologicalOrder {
		out, gvr, objs := d.findChild(d.g.Resources[id])
		d.obs.record(id, out)
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
func (d *deletion) findChild(res *graph.Resource) (result, schema.GroupVersionResource, []unstructured.Unstructured) {
	if res.External {
		return result{verdict: verdict{state: ResourceStateSkipped, reason: "external reference: never deleted"}}, schema.GroupVersionResource{}, nil
	}
	gvr, _, err := d.kinds.resolve(res)
	if err != nil {
		if meta.IsNoMatchError(err) || strings.Contains(err.Error(), "is not served") {
			return result{verdict: verdict{state: ResourceStateDeleted}}, gvr, nil
		}
		return result{verdict: errored(err)}, gvr, nil
	}
	objs, err := d.aset.ownedChildren(gvr, res.ID)
	if err != nil {
		d.io.errs.note(err)
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

// members is everything deletion removes: the members the
// ApplySet inventory lists (children of resources that left the graph
// included) and the children found by their node labels (written before
// kroscope kept an inventory), each once, each provenOwned.
func (d *deletion) members(present map[string][]unstructured.Unstructured, gvrs map[string]schema.GroupVersionResource) ([]member, error) {
	inv, err := d.aset.graphInventory()
	if err != nil {
		return nil, fmt.Errorf("deletion blocked: %w", err)
	}
	members, err := d.aset.listMembers(inv)
	if err != nil {
		return nil, err
	}
	seen := map[types.UID]bool{}
	for _, m := range members {
		seen[m.obj.GetUID()] = true
	}
	for _, id := range d.g.TopologicalOrder {
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
func (d *deletion) deleteWaves(members []member) bool {
	for len(members) > 0 {
		top := 0
		for _, m := range members {
			top = max(top, d.aset.memberOrder(m))
		}
		var wave, rest []member
		for _, m := range members {
			if d.aset.memberOrder(m) == top {
				wave = append(wave, m)
			} else {
				rest = append(rest, m)
			}
		}
		for _, m := range wave {
			d.deleteMember(m)
		}
		var still []member
		for _, m := range wave {
			cur, err := d.io.objs.Get(d.io.ctx, m.gvr, m.obj.GetNamespace(), m.obj.GetName())
			switch {
			case apierrors.IsNotFound(err):
			case err != nil:
				d.io.errs.note(err)
				d.memberFailed(m, fmt.Errorf("reading %s: %w", objectName(m.obj), err))
				still = append(still, m)
			case cur.GetUID() == m.obj.GetUID():
				still = append(still, member{gvr: m.gvr, obj: cur})
			}
		}
		d.markWaves(still, rest, top)
		if len(still) > 0 {
			return false
		}
		members = rest
	}
	return true
}

// deleteMember deletes one member unless it is already terminating, and
// reports one that outlives the grace time.
func (d *deletion) deleteMember(m member) {
	o := m.obj
	if ts := o.GetDeletionTimestamp(); ts != nil {
		grace := d.cfg.DeletionGraceTimeDuration
		if grace > 0 && d.now().Sub(ts.Time) > grace {
			d.memberFailed(m, fmt.Errorf("deletion has taken longer than %s: %s is still present (finalizers: %s)",
				grace, objectName(o), strings.Join(o.GetFinalizers(), ", ")))
		}
		return
	}
	if err := deleteObject(d.io, m.gvr, o); err != nil {
		d.io.errs.note(err)
		d.memberFailed(m, err)
	}
}

// memberDetail is the detail of a member's node, nil for a member whose
// resource is no longer in the graph.
func (d *deletion) memberDetail(m member) *ResourceDetail {
	return d.obs.detail(m.obj.GetLabels()[metadata.NodeIDLabel])
}

func (d *deletion) memberFailed(m member, err error) {
	if det := d.memberDetail(m); det != nil {
		det.State, det.Err = ResourceStateError, fmt.Errorf("resource %s: %w", det.ID, err)
		return
	}
	d.orphanErrs = append(d.orphanErrs, err.Error())
}

// markWaves sets the resources' states after a wave: DELETING for the
// members of wave top still present, PENDING_DELETION for later waves,
// DELETED for resources with nothing left.
func (d *deletion) markWaves(still, rest []member, top int) {
	left := map[string]bool{}
	// The blockers are named by resource id, as everywhere else on screen;
	// an object whose resource left the graph has no id, so by its name.
	var names []string
	for _, m := range still {
		if det := d.memberDetail(m); det != nil {
			if !slices.Contains(names, det.ID) {
				names = append(names, det.ID)
			}
		} else {
			names = append(names, objectName(m.obj))
		}
		if det := d.memberDetail(m); det != nil && det.State != ResourceStateError {
			left[det.ID] = true
			det.State, det.WaitingFor = ResourceStateDeleting, "deleting "+objectName(m.obj)
			if why := heldBy([]unstructured.Unstructured{*m.obj}); why != "" {
				det.WaitingFor = why // the finalizer the operator must look at
			}
		}
	}
	d.otherLeft = 0
	for _, m := range still {
		if d.memberDetail(m) == nil {
			d.otherLeft++
		}
	}
	for _, m := range rest {
		det := d.memberDetail(m)
		if det == nil {
			d.otherLeft++
			continue
		}
		left[det.ID] = true
		if det.State != ResourceStateError && len(still) > 0 {
			det.State = ResourceStatePendingDeletion
			det.WaitingFor = fmt.Sprintf("waiting for %s to be deleted first (apply-order wave %d)", strings.Join(names, ", "), top)
		}
	}
	for _, id := range d.g.TopologicalOrder {
		det := d.obs.detail(id)
		if !left[id] && (det.State == ResourceStateDeleting || det.State == ResourceStatePendingDeletion) {
			det.State, det.Err, det.WaitingFor = ResourceStateDeleted, nil, ""
		}
	}
}

// orphan removes kroscope's labels, hash annotation and owner reference
// from a child, keeping the object.
func (d *deletion) orphan(gvr schema.GroupVersionResource, o *unstructured.Unstructured) error {
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
	uid := d.inst.uid()
	refs := slices.DeleteFunc(o.GetOwnerReferences(), func(ref metav1.OwnerReference) bool { return ref.UID == uid })
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
	_, err = d.io.objs.Patch(d.io.ctx, gvr, o.GetNamespace(), o.GetName(), body, o.GetResourceVersion())
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("orphaning %s: %w", objectName(o), err)
	}
	return nil
}

// progress is the end of a pass that must come back: the DELETING
// status, saying what is left, and a requeue after the default duration.
func (d *deletion) progress() deletionEnd {
	var parts []string
	for _, id := range d.g.ReverseTopologicalOrder() {
		det := d.obs.detail(id)
		switch det.State {
		case ResourceStateDeleted, ResourceStateSkipped:
			continue
		case ResourceStateError:
			parts = append(parts, fmt.Sprintf("%s: %v", id, det.Err))
		default:
			parts = append(parts, fmt.Sprintf("%s: %s", id, strings.ToLower(det.State)))
		}
	}
	parts = append(parts, d.orphanErrs...)
	if d.otherLeft > 0 {
		parts = append(parts, fmt.Sprintf("%d object(s) of resources no longer in the graph: deleting", d.otherLeft))
	}
	msg := "deleting: " + strings.Join(parts, "; ")
	return deletionEnd{
		message: msg, status: statusRequired,
		blocked: len(d.orphanErrs) > 0 || d.obs.hasErrorDetail(),
		err:     requeue.After(d.cfg.DefaultRequeueDuration, fmt.Errorf("%s", msg)),
	}
}
