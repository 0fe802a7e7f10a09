package reconciler

import (
	"cmp"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kroscope/kroscope/reconciler/graph"
)

// externalCollection reads every object an external collection's
// selector matches. Nothing is ever written, deleted or pruned. Its value
// for status is the list of items (sorted by namespace then name, so renders
// are stable); for dependents, the same list once every item is ready.
func (s *steps) externalCollection(res *graph.Resource, vars graph.Vars) result {
	rendered, err := res.Render(vars)
	if err != nil {
		return result{verdict: renderFailed(res, err)}
	}
	sel, err := graph.LabelSelector(rendered)
	if err != nil {
		return result{verdict: failed(fmt.Errorf("resource %s: spec.resources[%d].externalRef.%w", res.ID, res.Index, err))}
	}
	gvr, namespaced, err := s.kinds.resolve(res)
	if err != nil {
		s.io.errs.note(err)
		return result{verdict: errored(err)}
	}
	// An empty namespace means every namespace.
	ns := rendered.GetNamespace()
	if !namespaced {
		ns = ""
	}
	if err := s.w.confine(res, namespaced, ns); err != nil {
		return result{verdict: failed(err)}
	}
	out := result{namespace: ns}
	list, err := s.io.objs.List(s.io.ctx, gvr, ns, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		s.io.errs.note(err)
		where := "all namespaces"
		if ns != "" {
			where = "namespace " + ns
		}
		out.verdict = errored(fmt.Errorf("resource %s: listing %s with selector %q in %s: %w", res.ID, gvr.Resource, sel.String(), where, err))
		return out
	}
	items := sortedItems(res, list)
	out.desired, out.observed = listObject(items), listObject(items)
	values := make([]any, 0, len(items))
	for _, it := range items {
		values = append(values, it.Object)
	}
	out.value = values
	out.verdict, out.ready = itemsReady(res, items)
	return out
}

// sortedItems are the listed objects sorted by namespace then name, each
// with its kind (a list's items carry no apiVersion/kind of their own on
// the wire).
func sortedItems(res *graph.Resource, list *unstructured.UnstructuredList) []*unstructured.Unstructured {
	items := make([]*unstructured.Unstructured, 0, len(list.Items))
	for i := range list.Items {
		items = append(items, &list.Items[i])
	}
	slices.SortFunc(items, func(a, b *unstructured.Unstructured) int {
		return cmp.Or(cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
	})
	for _, it := range items {
		if it.GetKind() == "" {
			it.SetGroupVersionKind(res.GVK)
		}
	}
	return items
}

// itemsReady is the verdict of an external collection's readiness: SYNCED
// (and ready) when every item is.
func itemsReady(res *graph.Resource, items []*unstructured.Unstructured) (verdict, bool) {
	var unready []string
	for _, it := range items {
		ready, why, err := res.IsReady(it.Object)
		if err != nil && !graph.IsDataPending(err) {
			return failed(graph.OnItem(err, fmt.Sprintf("resource %s item %s", res.ID, objectName(it)))), false
		}
		if !ready {
			if why == "" && err != nil {
				why = "readyWhen: " + err.Error()
			}
			unready = append(unready, fmt.Sprintf("item %s: %s", itemName(it), why))
		}
	}
	if len(unready) > 0 {
		return verdict{state: ResourceStateWaitingForReadiness, reason: fmt.Sprintf("%d of %d items not ready; %s", len(unready), len(items), unready[0])}, false
	}
	return verdict{state: ResourceStateSynced}, true
}

// itemName is ns/name, or name for a cluster-scoped object.
func itemName(u *unstructured.Unstructured) string {
	if ns := u.GetNamespace(); ns != "" {
		return ns + "/" + u.GetName()
	}
	return u.GetName()
}
