package reconciler

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kroscope/kroscope/reconciler/metadata"
	"github.com/kroscope/kroscope/reconciler/requeue"
)

// deletion removes the instance's children and then its finalizer. It
// needs no CEL: children are found by their instance-id and node-id labels,
// so an instance whose dependencies or external refs vanished can always
// finish deleting.
func (r *run) deletion() error {
	r.initDetails()
	r.state = InstanceStateDeleting
	if !slices.Contains(r.inst.GetFinalizers(), metadata.Finalizer) {
		r.message = "being deleted; kroscope's finalizer is already removed"
		return nil
	}
	policy := r.c.cfg.DeletionPolicy
	if policy == "" {
		policy = DeletionPolicyDelete
	}
	if policy != DeletionPolicyDelete && policy != DeletionPolicyOrphan {
		err := fmt.Errorf("unknown deletion policy %q: use %q or %q", policy, DeletionPolicyDelete, DeletionPolicyOrphan)
		r.message = err.Error()
		if _, serr := r.writeStatus(); serr != nil {
			r.log.V(1).Info("status write failed", "error", serr.Error())
		}
		return requeue.None(err)
	}

	present, gvrs, failed := r.findChildren()
	if failed {
		return r.finishDeletionPass()
	}
	if r.opts.Observe {
		for id := range present {
			r.details[id].State = ResourceStatePendingDeletion
		}
		r.message = "being deleted (observing: kroscope does not delete)"
		return nil
	}

	if policy == DeletionPolicyOrphan {
		for _, id := range r.c.rg.TopologicalOrder {
			for i := range present[id] {
				if err := r.orphan(gvrs[id], &present[id][i]); err != nil {
					r.noteErr(err)
					r.details[id].State, r.details[id].Err = ResourceStateError, fmt.Errorf("resource %s: %w", id, err)
					failed = true
				}
			}
			if !failed && len(present[id]) > 0 {
				r.details[id].State = ResourceStateDeleted
				r.details[id].WaitingFor = "orphaned: kept without kroscope's labels and owner reference"
			}
		}
		if failed {
			return r.finishDeletionPass()
		}
		clear(present)
	}

	// One layer at a time, dependents first: a layer starts only when every
	// layer after it is gone.
	layers := r.c.rg.Layers
	for li := len(layers) - 1; li >= 0; li-- {
		ids := layerPresent(layers[li], present)
		if len(ids) == 0 {
			continue
		}
		for _, id := range ids {
			r.deleteNode(id, gvrs[id], present[id])
		}
		// Objects without finalizers are gone at once: look again, and move
		// on to the next layer in this same pass when they are.
		for _, id := range ids {
			objs, err := r.ownedChildren(gvrs[id], id)
			if err != nil {
				r.noteErr(err)
				r.details[id].State, r.details[id].Err = ResourceStateError, err
				continue
			}
			if len(objs) == 0 {
				r.details[id].State, r.details[id].Err, r.details[id].WaitingFor = ResourceStateDeleted, nil, ""
				delete(present, id)
			} else {
				present[id] = objs
				if why := heldBy(objs); why != "" {
					r.details[id].WaitingFor = why
				}
			}
		}
		if len(layerPresent(layers[li], present)) > 0 {
			for lj := li - 1; lj >= 0; lj-- {
				for _, id := range layerPresent(layers[lj], present) {
					r.details[id].State = ResourceStatePendingDeletion
					r.details[id].WaitingFor = "waiting for " + strings.Join(layerPresent(layers[li], present), ", ") + " to be deleted first"
				}
			}
			break
		}
	}
	if len(present) > 0 {
		return r.finishDeletionPass()
	}
	for _, id := range r.c.rg.TopologicalOrder {
		if r.details[id].State == ResourceStateError {
			return r.finishDeletionPass()
		}
	}
	if err := r.removeFinalizer(); err != nil {
		r.noteErr(err)
		if apierrors.IsConflict(err) {
			r.instanceStale()
			return requeue.Now(err)
		}
		r.message = err.Error()
		return err
	}
	r.gone = true
	r.message = "children deleted; finalizer removed"
	if policy == DeletionPolicyOrphan {
		r.message = "children orphaned; finalizer removed"
	}
	r.event("Normal", "Deleted", r.message)
	return nil
}

// findChildren lists every resource's labelled objects. External refs are
// SKIPPED: they are never deleted.
func (r *run) findChildren() (map[string][]unstructured.Unstructured, map[string]schema.GroupVersionResource, bool) {
	present := map[string][]unstructured.Unstructured{}
	gvrs := map[string]schema.GroupVersionResource{}
	failed := false
	for _, id := range r.c.rg.TopologicalOrder {
		res, d := r.c.rg.Resources[id], r.details[id]
		if res.External {
			d.State, d.WaitingFor = ResourceStateSkipped, "external reference: never deleted"
			continue
		}
		gvr, _, err := r.resolveGVR(res)
		if err != nil {
			if meta.IsNoMatchError(err) || strings.Contains(err.Error(), "is not served") {
				d.State = ResourceStateDeleted // the kind is gone, so are its objects
				continue
			}
			d.State, d.Err = ResourceStateError, err
			failed = true
			continue
		}
		gvrs[id] = gvr
		objs, err := r.ownedChildren(gvr, id)
		if err != nil {
			r.noteErr(err)
			d.State, d.Err = ResourceStateError, fmt.Errorf("resource %s: %w", id, err)
			failed = true
			continue
		}
		if len(objs) == 0 {
			d.State = ResourceStateDeleted
			continue
		}
		present[id] = objs
		d.State = ResourceStatePendingDeletion
		if res.IsCollection() {
			// Every item is found by its labels and deleted with the rest.
			items := make([]*unstructured.Unstructured, len(objs))
			for i := range objs {
				items[i] = &objs[i]
			}
			d.Observed = listObject(items)
			continue
		}
		d.Observed = &objs[0]
		d.Name, d.Namespace = objs[0].GetName(), objs[0].GetNamespace()
	}
	return present, gvrs, failed
}

// ownedChildren lists the objects whose labels prove they are this
// instance's node id.
func (r *run) ownedChildren(gvr schema.GroupVersionResource, id string) ([]unstructured.Unstructured, error) {
	objs, err := r.listChildren(gvr, id)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(objs, func(o unstructured.Unstructured) bool {
		return !metadata.OwnedBy(o.GetLabels(), r.uid())
	}), nil
}

// deleteNode deletes a node's objects (those not already terminating) and
// reports those that outlive the grace time.
func (r *run) deleteNode(id string, gvr schema.GroupVersionResource, objs []unstructured.Unstructured) {
	d := r.details[id]
	d.State, d.WaitingFor = ResourceStateDeleting, "deleting "+objectName(&objs[0])
	for i := range objs {
		o := &objs[i]
		if ts := o.GetDeletionTimestamp(); ts != nil {
			grace := r.c.cfg.DeletionGraceTimeDuration
			if grace > 0 && r.now().Sub(ts.Time) > grace {
				d.State = ResourceStateError
				d.Err = fmt.Errorf("resource %s: deletion has taken longer than %s: %s is still present (finalizers: %s)",
					id, grace, objectName(o), strings.Join(o.GetFinalizers(), ", "))
			}
			continue
		}
		if err := r.deleteObject(gvr, o); err != nil {
			r.noteErr(err)
			d.State, d.Err = ResourceStateError, fmt.Errorf("resource %s: %w", id, err)
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
		"annotations":     map[string]any{metadata.DesiredHashAnnotation: nil},
	}
	refs := slices.DeleteFunc(o.GetOwnerReferences(), func(ref metav1.OwnerReference) bool { return ref.UID == r.uid() })
	if len(refs) != len(o.GetOwnerReferences()) {
		if len(refs) == 0 {
			md["ownerReferences"] = nil
		} else {
			md["ownerReferences"] = refs
		}
	}
	body, err := json.Marshal(map[string]any{"metadata": md})
	if err != nil {
		return err
	}
	_, err = r.resourceClient(gvr, o.GetNamespace()).Patch(r.ctx, o.GetName(), types.MergePatchType, body, metav1.PatchOptions{FieldManager: metadata.FieldManager})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("orphaning %s: %w", objectName(o), err)
	}
	return nil
}

// finishDeletionPass writes the DELETING status and asks to come back.
func (r *run) finishDeletionPass() error {
	var parts []string
	for _, id := range r.c.rg.ReverseTopologicalOrder() {
		d := r.details[id]
		switch d.State {
		case ResourceStateDeleted, ResourceStateSkipped:
			continue
		case ResourceStateError:
			parts = append(parts, fmt.Sprintf("%s: %v", id, d.Err))
		default:
			parts = append(parts, fmt.Sprintf("%s: %s", id, strings.ToLower(d.State)))
		}
	}
	r.message = "deleting: " + strings.Join(parts, "; ")
	if !r.opts.Observe {
		if _, err := r.writeStatus(); err != nil && !apierrors.IsNotFound(err) {
			r.noteErr(err)
			return fmt.Errorf("writing status: %w", err)
		}
	}
	return requeue.After(r.c.cfg.DefaultRequeueDuration, fmt.Errorf("%s", r.message))
}

func layerPresent(layer []string, present map[string][]unstructured.Unstructured) []string {
	var out []string
	for _, id := range layer {
		if len(present[id]) > 0 {
			out = append(out, id)
		}
	}
	return out
}
