package reconciler

import (
	"cmp"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kroscope/kroscope/reconciler/graph"
)

// reconcileExternalCollection reads every object an external collection's
// selector matches. Nothing is ever written, deleted or pruned. Its value
// for status is the list of items (sorted by namespace then name, so renders
// are stable); for dependents, the same list once every item is ready.
func (r *run) reconcileExternalCollection(res *graph.Resource, d *ResourceDetail, vars graph.Vars) {
	rendered, err := res.Render(vars)
	if err != nil {
		r.renderFailed(res, d, err)
		return
	}
	sel, err := graph.LabelSelector(rendered)
	if err != nil {
		d.State, d.Err = ResourceStateFailed, fmt.Errorf("resource %s: spec.resources[%d].externalRef.%w", res.ID, res.Index, err)
		return
	}
	gvr, namespaced, err := r.resolveGVR(res)
	if err != nil {
		d.State, d.Err = ResourceStateError, err
		r.noteErr(err)
		return
	}
	// An empty namespace means every namespace.
	ns := rendered.GetNamespace()
	if !namespaced {
		ns = ""
	}
	d.Name, d.Namespace = "", ns
	where := "all namespaces"
	if ns != "" {
		where = "namespace " + ns
	}
	list, err := r.objs.List(r.ctx, gvr, ns, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		r.noteErr(err)
		d.State, d.Err = ResourceStateError, fmt.Errorf("resource %s: listing %s with selector %q in %s: %w", res.ID, gvr.Resource, sel.String(), where, err)
		return
	}
	items := make([]*unstructured.Unstructured, 0, len(list.Items))
	for i := range list.Items {
		items = append(items, &list.Items[i])
	}
	slices.SortFunc(items, func(a, b *unstructured.Unstructured) int {
		return cmp.Or(cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
	})
	for _, it := range items {
		// A list's items carry no apiVersion/kind of their own on the wire.
		if it.GetKind() == "" {
			it.SetGroupVersionKind(res.GVK)
		}
	}
	d.Desired = listObject(items)
	d.Observed = listObject(items)
	values := make([]any, 0, len(items))
	for _, it := range items {
		values = append(values, it.Object)
	}
	r.setList(r.allVars, res.ID, values)
	d.Err, d.WaitingFor = nil, ""

	var unready []string
	for _, it := range items {
		ready, why, err := res.IsReady(it.Object)
		if err != nil && !graph.IsDataPending(err) {
			d.State, d.Err = ResourceStateFailed, fmt.Errorf("resource %s: %s: readyWhen: %w", res.ID, objectName(it), err)
			return
		}
		if !ready {
			if why == "" && err != nil {
				why = "readyWhen: " + err.Error()
			}
			unready = append(unready, fmt.Sprintf("item %s: %s", itemName(it), why))
		}
	}
	if len(unready) > 0 {
		d.State = ResourceStateWaitingForReadiness
		d.WaitingFor = fmt.Sprintf("%d of %d items not ready; %s", len(unready), len(items), unready[0])
		return
	}
	r.setList(r.readyVars, res.ID, values)
	d.State = ResourceStateSynced
}

// itemName is ns/name, or name for a cluster-scoped object.
func itemName(u *unstructured.Unstructured) string {
	if ns := u.GetNamespace(); ns != "" {
		return ns + "/" + u.GetName()
	}
	return u.GetName()
}
