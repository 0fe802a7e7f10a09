package reconciler

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kroscope/kroscope/reconciler/confine"
	desiredpkg "github.com/kroscope/kroscope/reconciler/desired"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
)

// place defaults the namespace of a namespaced child to the instance's.
func (w *writer) place(res *graph.Resource, desired *unstructured.Unstructured) error {
	if desired.GetName() == "" {
		return fmt.Errorf("resource %s: rendered %s has no metadata.name", res.ID, res.GVK.Kind)
	}
	if ns := w.inst.get().GetNamespace(); res.Namespaced && desired.GetNamespace() == "" {
		if ns == "" {
			return fmt.Errorf("resource %s: %s is namespaced but sets no metadata.namespace, and the instance is cluster-scoped", res.ID, res.GVK.Kind)
		}
		desired.SetNamespace(ns)
	}
	return nil
}

// confine asks confine.Decide whether res's object may be written (or,
// external, read) in namespace ns; namespaced is the kind's scope as the
// API server serves it.
func (w *writer) confine(res *graph.Resource, namespaced bool, ns string) error {
	instNS := w.inst.get().GetNamespace()
	v := confine.Decide(confine.Facts{
		Kind: res.GVK.GroupKind(), External: res.External || res.ExternalCollection, Namespaced: namespaced,
		InstanceNamespaced: instNS != "", InstanceNamespace: instNS,
		Rendered: true, Namespace: ns, LiteralNamespace: !NamespaceComputed(res), Grant: w.grant,
	})
	if !v.Allowed {
		return fmt.Errorf("resource %s: %s", res.ID, v.Why)
	}
	return nil
}

// NamespaceComputed reports whether res's metadata.namespace comes from an
// expression (the field itself, or a map or object holding it, is
// templated) rather than being written in the graph, or left out.
func NamespaceComputed(res *graph.Resource) bool {
	want := []any{"metadata", "namespace"}
	for _, f := range res.Fields {
		if len(f.Segments) <= len(want) && slices.Equal(f.Segments, want[:len(f.Segments)]) {
			return true
		}
	}
	return false
}

// stamp adds kro's and kroscope's labels, the ApplySet part-of label,
// the apply-order annotation and, when the API server allows it, an owner
// reference to the instance: a namespaced instance can own children in its
// own namespace only, a cluster-scoped one any child.
func (w *writer) stamp(res *graph.Resource, desired *unstructured.Unstructured) {
	// What a graph writes into a Secret is as secret as what it reads.
	w.red.AddSecret(desired.Object)
	// Only the child labels: the instance labeler's set (its graph's name)
	// belongs on instances. A child that is itself an instance of another
	// graph gets that graph's labels from its own controller, and both
	// applying different values would conflict.
	labels := metadata.ChildLabels(w.inst.ref(), res.ID)
	labels[metadata.ApplySetPartOfLabel] = w.inst.applySetID()
	setMetadataStrings(desired, "labels", labels)
	setMetadataStrings(desired, "annotations", map[string]string{metadata.ApplyOrderAnnotation: strconv.Itoa(w.applyOrders[res.ID])})

	inst := w.inst.get()
	if inst.GetNamespace() == "" || desired.GetNamespace() == inst.GetNamespace() {
		// The unstructured form of metav1.OwnerReference{..., Controller:
		// true}, built directly: SetOwnerReferences converts by reflection.
		_ = unstructured.SetNestedSlice(desired.Object, []any{map[string]any{
			"apiVersion": inst.GetAPIVersion(),
			"kind":       inst.GetKind(),
			"name":       inst.GetName(),
			"uid":        string(inst.GetUID()),
			"controller": true,
		}}, "metadata", "ownerReferences")
	}
}

// setMetadataStrings sets kv in obj's metadata.labels or
// metadata.annotations (field) as GetLabels, maps.Copy and SetLabels would
// (or their annotation twins): into the object's own map when it holds
// only strings, as a rendered template's does, instead of converting it to
// a map[string]string and back on every pass; anything else (a value that
// is not a string) goes the converting way, which drops such a map.
func setMetadataStrings(obj *unstructured.Unstructured, field string, kv map[string]string) {
	if md, ok := obj.Object["metadata"].(map[string]any); ok {
		cur, isMap := md[field].(map[string]any)
		if md[field] == nil {
			cur, isMap = map[string]any{}, true
		}
		if isMap && allStrings(cur) {
			for k, v := range kv {
				cur[k] = v
			}
			md[field] = cur
			return
		}
	}
	get, set := obj.GetLabels, obj.SetLabels
	if field == "annotations" {
		get, set = obj.GetAnnotations, obj.SetAnnotations
	}
	m := get()
	if m == nil {
		m = map[string]string{}
	}
	maps.Copy(m, kv)
	set(m)
}

func allStrings(m map[string]any) bool {
	for _, v := range m {
		if _, ok := v.(string); !ok {
			return false
		}
	}
	return true
}

// liveChild is what stands at desired's name, as far as this pass must
// know before writing: the watches' copy when they know it, and nil when
// they do not: the apply that creates the child proves the name free, and
// fails with client.ErrExists when it is not (client.Objects.Create).
// Observing (nothing will be written) or without watches to ask, it is
// the API server's.
func (w *writer) liveChild(gvr schema.GroupVersionResource, desired *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if !w.io.observe {
		if u, ok := w.io.objs.KnownChild(gvr, desired.GetNamespace(), desired.GetName()); ok {
			return u, nil
		}
	}
	return w.io.objs.Child(w.io.ctx, gvr, desired.GetNamespace(), desired.GetName())
}

// applyObject applies desired over existing (nil: it does not exist) and
// judges what the API server returned.
func (w *writer) applyObject(res *graph.Resource, gvr schema.GroupVersionResource, desired, existing *unstructured.Unstructured, out result) result {
	adopting := existing != nil && len(kroAdoption(existing, w.inst.uid())) > 0
	observed, created, updated, err := w.apply(res, gvr, desired, existing)
	if err != nil {
		w.io.errs.note(err)
		if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
			// The rendered object itself is wrong: retrying cannot help.
			out.verdict = failed(fmt.Errorf("resource %s: the API server rejected %s: %w", res.ID, objectName(desired), err))
			return out
		}
		out.verdict = errored(fmt.Errorf("resource %s: applying %s: %w", res.ID, objectName(desired), err))
		return out
	}
	if created || updated {
		// What the API server stored is what the next pass would compare
		// with: when it holds the desired object, that pass finds it SYNCED.
		_, out.settled = desiredpkg.Subset(desired.Object, observed.Object, "")
		out.adopted = updated && adopting
	}
	out.observed = observed
	if created && w.inst.reconciledBefore() {
		// A new object may replace one this node made under another name
		// (its name is templated): remove the old one, by label proof.
		// An instance never reconciled before has nothing to replace, and
		// skipping the cluster-wide LIST matters when hundreds are created
		// at once. (A child left by a reconcile that crashed before its
		// first status write is still found by deletion, which lists by
		// label.)
		if err := w.pruneReplaced(res, observed); err != nil {
			w.io.errs.note(err)
			out.verdict = errored(fmt.Errorf("resource %s: removing the object it replaced: %w", res.ID, err))
			return out
		}
	}
	out = judge(res, out, observed, writtenState(created, updated))
	if n := w.recreated.note(w.inst.uid(), res.ID, created, observed.GetUID(), w.now()); n > RecreateLimit {
		out.verdict = errored(keepsDeleted(res.ID, objectName(observed), n))
	}
	return out
}

// applyItem applies one item over existing (nil: unknown) and judges what
// the API server returned.
func (w *writer) applyItem(res *graph.Resource, gvr schema.GroupVersionResource, item string, desired, existing *unstructured.Unstructured) itemResult {
	adopting := existing != nil && len(kroAdoption(existing, w.inst.uid())) > 0
	observed, created, updated, err := w.apply(res, gvr, desired, existing)
	if err != nil {
		w.io.errs.note(err)
		if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
			return itemResult{state: ResourceStateFailed, err: fmt.Errorf("%s: the API server rejected it: %w", item, err)}
		}
		return itemResult{state: ResourceStateError, err: fmt.Errorf("%s: applying it: %w", item, err)}
	}
	out := itemResult{observed: observed, created: created, updated: updated, adopted: updated && adopting}
	if created || updated {
		_, out.settled = desiredpkg.Subset(desired.Object, observed.Object, "")
	}
	out.ready, out.why, err = res.IsReady(observed.Object)
	if err != nil && !graph.IsDataPending(err) {
		return itemResult{observed: observed, state: failedState(err), err: graph.OnItem(err, item)}
	}
	if !out.ready {
		out.why = fmt.Sprintf("%s: %s", objectName(observed), out.why)
	}
	return out
}
