package reconciler

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kroscope/kroscope/reconciler/confine"
	desiredpkg "github.com/kroscope/kroscope/reconciler/desired"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
	"github.com/kroscope/kroscope/reconciler/redact"
	"time"
)

// writer makes the writes of the instance's children, as kro's controller
// does for its runtime: it places and stamps a rendered object, checks that
// the object at its name may be touched, applies it (recording it in the
// ApplySet first), judges what the API server returned, and prunes what a
// node no longer renders. It keeps nothing between children: what it
// finds goes back to its caller.
type writer struct {
	io    reach
	inst  *instance
	aset  *applySet
	kinds kinds
	ev    *events
	red   *redact.Set
	// adopt lets an object without ownership labels be taken over; grant
	// is what a cluster admin allowed beyond confine's default.
	adopt bool
	grant confine.Grant
	// applyOrders are the resources' deletion waves, stamped on children.
	applyOrders map[string]int
	recreated   *recreations
	now         func() time.Time
}

// ownershipProblem says why existing must not be touched by this instance,
// or "" when it may.
func (w *writer) ownershipProblem(existing *unstructured.Unstructured) string {
	l := existing.GetLabels()
	id, uid := w.inst.applySetID(), w.inst.uid()
	if p := l[metadata.ApplySetPartOfLabel]; p != "" && p != id {
		return fmt.Sprintf("%s already exists and belongs to ApplySet %q, not this instance's %q; kroscope will not touch it",
			objectName(existing), p, id)
	}
	if metadata.OwnedBy(l, uid) {
		return ""
	}
	if owner := metadata.Owner(l); owner != "" {
		return fmt.Sprintf("%s already exists and belongs to instance %s; kroscope will not touch it (rename one of them, or delete the other instance's object)",
			objectName(existing), owner)
	}
	for _, ref := range existing.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller && ref.UID != uid {
			return fmt.Sprintf("%s already exists and is controlled by %s %s (uid %s); kroscope will not touch it",
				objectName(existing), ref.Kind, ref.Name, ref.UID)
		}
	}
	if w.adopt {
		return ""
	}
	return fmt.Sprintf("%s already exists and is not managed by kroscope; to let this instance adopt it, label it %s=%s "+
		"(or enable adoption), or delete it so it is recreated", objectName(existing), metadata.InstanceIDLabel, uid)
}

// apply sends desired with server-side apply when the live object differs
// from it. It never forces over fields another apply-manager owns; fields
// taken by an imperative edit (an Update by a person or a script) are drift
// and are taken back, with an Event naming who changed them.
func (w *writer) apply(res *graph.Resource, gvr schema.GroupVersionResource, desired, existing *unstructured.Unstructured) (observed *unstructured.Unstructured, created, updated bool, err error) {
	hash, err := desiredpkg.Hash(desired)
	if err != nil {
		return nil, false, false, fmt.Errorf("hashing the desired object: %w", err)
	}
	setMetadataStrings(desired, "annotations", map[string]string{metadata.DesiredHashAnnotation: hash})

	if existing != nil && desiredpkg.Current(desired, existing) {
		w.aset.keepMember(existing)
		return existing, false, false, nil // converged: no write at all
	}
	// The parent records the child's kind and namespace before the child
	// exists, so deletion can always find it.
	if err := w.aset.recordMember(desired); err != nil {
		return nil, false, false, err
	}

	opts := metav1.ApplyOptions{FieldManager: metadata.FieldManager}
	if existing == nil {
		// Nothing known at the name: create it only if it is free
		// (client.ErrExists otherwise: the caller reads what stands there
		// and judges it, as it judges a known object).
		out, err := w.io.objs.Create(w.io.ctx, gvr, desired, opts)
		if err != nil {
			return nil, false, false, err
		}
		w.aset.keepMember(out)
		return out, true, false, nil
	}
	replaces := existing.GetResourceVersion()
	if kro := kroAdoption(existing, w.inst.uid()); len(kro) > 0 {
		// Known in advance: the plain apply would be refused for kro's
		// fields, and taken over on the retry. One write, not two.
		w.ev.event(corev1.EventTypeNormal, "Adopted", fmt.Sprintf("resource %s: adopting %s from kro (field managers %s)",
			res.ID, objectName(desired), strings.Join(kro, ", ")))
		opts.Force = true
	}
	out, err := w.io.objs.Apply(w.io.ctx, gvr, desired, opts, replaces)
	if err != nil && apierrors.IsConflict(err) && !opts.Force {
		if err = w.takeOver(res, desired, existing, err); err == nil {
			opts.Force = true
			out, err = w.io.objs.Apply(w.io.ctx, gvr, desired, opts, replaces)
		}
	}
	if err != nil {
		return nil, false, false, err
	}
	w.aset.keepMember(out)
	return out, false, out.GetResourceVersion() != existing.GetResourceVersion(), nil
}

// takeOver decides on an apply conflict: fields kro or an imperative edit
// took are taken back (nil: force the apply), with an Event saying whose;
// fields another apply-manager owns are not (the conflict, explained).
func (w *writer) takeOver(res *graph.Resource, desired, existing *unstructured.Unstructured, conflict error) error {
	managers := conflictManagers(conflict)
	// kro's managers on a child that is this same instance's (kro made
	// it, or took it over) are not another owner: kroscope adopts the
	// child, taking over their fields, as kro does with kroscope's.
	kro := w.kroManagers(existing, managers)
	others := slices.DeleteFunc(slices.Clone(managers), func(m string) bool { return slices.Contains(kro, m) })
	if applier := applyManagers(existing, others); len(applier) > 0 {
		return fmt.Errorf("fields are owned by field manager(s) %s, which also apply this object; kroscope does not take them over: %w",
			strings.Join(applier, ", "), conflict)
	}
	if len(kro) > 0 {
		w.ev.event(corev1.EventTypeNormal, "Adopted", fmt.Sprintf("resource %s: adopting %s from kro (field managers %s)",
			res.ID, objectName(desired), strings.Join(kro, ", ")))
	}
	if len(others) > 0 {
		w.ev.event(corev1.EventTypeNormal, "DriftCorrected", fmt.Sprintf("resource %s: restoring %s, changed by %s",
			res.ID, objectName(desired), strings.Join(others, ", ")))
	}
	return nil
}

// kroAdoption names kro's field managers of existing when adopting it from
// kro is all an apply over it would do to other managers' fields: it is
// this instance's child (its labels say so), kro applied it, and no other
// manager but kroscope holds fields of the object itself (a status
// writer's fields are the status subresource's: an apply does not touch
// them). Then the apply forces from the start, as takeOver decides on the
// conflict a plain apply gets. nil otherwise: any other manager is judged
// on the conflict, which names it.
func kroAdoption(existing *unstructured.Unstructured, uid types.UID) []string {
	if !metadata.OwnedBy(existing.GetLabels(), uid) {
		return nil
	}
	var kro []string
	for _, e := range existing.GetManagedFields() {
		switch {
		case e.Subresource != "" || e.Manager == metadata.FieldManager:
		case metadata.IsKroManager(e.Manager):
			if !slices.Contains(kro, e.Manager) {
				kro = append(kro, e.Manager)
			}
		default:
			return nil
		}
	}
	return kro
}

// kroManagers returns those of managers that are kro's, when existing's
// labels prove it belongs to this instance; nil otherwise.
func (w *writer) kroManagers(existing *unstructured.Unstructured, managers []string) []string {
	if !metadata.OwnedBy(existing.GetLabels(), w.inst.uid()) {
		return nil
	}
	var out []string
	for _, m := range managers {
		if metadata.IsKroManager(m) {
			out = append(out, m)
		}
	}
	return out
}

var conflictManagerRE = regexp.MustCompile(`conflict with "([^"]+)"`)

// conflictManagers lists the field managers an apply conflict names.
func conflictManagers(err error) []string {
	var out []string
	add := func(s string) {
		for _, m := range conflictManagerRE.FindAllStringSubmatch(s, -1) {
			if !slices.Contains(out, m[1]) {
				out = append(out, m[1])
			}
		}
	}
	var se *apierrors.StatusError
	if errors.As(err, &se) && se.ErrStatus.Details != nil {
		for _, c := range se.ErrStatus.Details.Causes {
			add(c.Message)
		}
	}
	if len(out) == 0 {
		add(err.Error())
	}
	return out
}

// applyManagers returns those of managers that own fields of obj through
// server-side apply (or that obj does not list: unknown counts as applier,
// the safe side).
func applyManagers(obj *unstructured.Unstructured, managers []string) []string {
	var out []string
	for _, m := range managers {
		isUpdate := false
		found := false
		for _, e := range obj.GetManagedFields() {
			if e.Manager != m {
				continue
			}
			found = true
			if e.Operation == metav1.ManagedFieldsOperationApply {
				isUpdate = false
				break
			}
			isUpdate = true
		}
		if !found || !isUpdate {
			out = append(out, m)
		}
	}
	return out
}
