package reconciler

import (
	"errors"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
)

// itemResult is what one pass did with one item of a collection.
type itemResult struct {
	observed         *unstructured.Unstructured
	created, updated bool
	// settled and adopted as a single resource's (result).
	settled, adopted bool
	ready            bool
	// why says what holds a not-ready, missing, drifting or deleting item.
	why      string
	missing  bool // observe mode: the item does not exist
	drifted  bool // observe mode: the item differs from its template
	deleting bool
	// state is ResourceStateError or ResourceStateFailed when err is set.
	state string
	err   error
}

// collection renders every item of a forEach collection, applies
// each one as a single child would be (same ownership check, same cached
// reads, same apply), then deletes this node's objects that are no longer
// items. Its value for dependents is the list of observed items.
func (s *steps) collection(res *graph.Resource, vars graph.Vars) result {
	items, err := res.RenderCollection(vars)
	if err != nil {
		return result{verdict: renderFailed(res, err)}
	}
	gvr, namespaced, err := s.kinds.resolve(res)
	if err != nil {
		s.io.errs.note(err)
		return result{verdict: errored(err)}
	}
	// A collection has no single name: the engine shows the item count.
	if err := s.prepareItems(res, items, namespaced); err != nil {
		return result{verdict: failed(err)}
	}
	results := s.items(res, gvr, items)
	observed := make([]*unstructured.Unstructured, 0, len(results))
	for _, ir := range results {
		if ir.observed != nil {
			observed = append(observed, ir.observed)
		}
	}
	out := collectionState(results, observed)
	out.desired, out.observed = listObject(items), listObject(observed)
	if out.state == ResourceStateError || out.state == ResourceStateFailed || s.io.observe {
		// Pruning only after every item was applied: a half-applied
		// collection must not lose the objects it may still need.
		return out
	}
	if err := s.w.pruneCollection(res, gvr, items); err != nil {
		s.io.errs.note(err)
		out.state, out.err = ResourceStateError, fmt.Errorf("resource %s: removing objects that are no longer items: %w", res.ID, err)
	}
	return out
}

// items reconciles the items concurrently (at most maxParallel at once),
// each into its own result.
func (s *steps) items(res *graph.Resource, gvr schema.GroupVersionResource, items []*unstructured.Unstructured) []itemResult {
	results := make([]itemResult, len(items))
	eachAtOnce(len(items), func(i int) {
		results[i] = s.item(res, gvr, i, items[i])
	})
	return results
}

// prepareItems places every item in its namespace and stamps the child
// labels plus the item's index and the collection's size. Two items that
// land on the same object (one names the instance's namespace, the other
// leaves it to the default) are an error.
func (s *steps) prepareItems(res *graph.Resource, items []*unstructured.Unstructured, namespaced bool) error {
	seen := make(map[string]int, len(items))
	size := strconv.Itoa(len(items))
	for i, it := range items {
		if err := s.w.place(res, it); err != nil {
			return fmt.Errorf("item %d: %w", i, err)
		}
		if !namespaced {
			it.SetNamespace("")
		}
		if err := s.w.confine(res, namespaced, it.GetNamespace()); err != nil {
			return fmt.Errorf("item %d: %w", i, err)
		}
		key := it.GetNamespace() + "/" + it.GetName()
		if prev, dup := seen[key]; dup {
			return fmt.Errorf("resource %s: items %d and %d are both %s: make metadata.name unique per item", res.ID, prev, i, objectName(it))
		}
		seen[key] = i
		s.w.stamp(res, it)
		labels := it.GetLabels()
		labels[metadata.CollectionIndexLabel] = strconv.Itoa(i)
		labels[metadata.CollectionSizeLabel] = size
		it.SetLabels(labels)
	}
	return nil
}

// item reads, checks and applies one item; it never touches the detail
// (items run concurrently).
func (s *steps) item(res *graph.Resource, gvr schema.GroupVersionResource, i int, desired *unstructured.Unstructured) itemResult {
	item := fmt.Sprintf("resource %s item %d (%s)", res.ID, i, objectName(desired))
	existing, err := s.w.liveChild(gvr, desired)
	for try := 0; ; try++ {
		if err != nil {
			s.io.errs.note(err)
			return itemResult{state: ResourceStateError, err: fmt.Errorf("%s: reading it: %w", item, err)}
		}
		if existing != nil {
			if msg := s.w.ownershipProblem(existing); msg != "" {
				return itemResult{observed: existing, state: ResourceStateError, err: fmt.Errorf("%s: %s", item, msg)}
			}
			if existing.GetDeletionTimestamp() != nil {
				return itemResult{observed: existing, deleting: true, why: objectName(existing) + " is being deleted; it will be recreated once gone"}
			}
		}
		if s.io.observe {
			return observeItem(res, desired, existing)
		}
		out := s.w.applyItem(res, gvr, item, desired, existing)
		if !errors.Is(out.err, client.ErrExists) || try > 0 {
			return out
		}
		// Taken by an object the watches do not know: read and judge it.
		existing, err = s.io.objs.Child(s.io.ctx, gvr, desired.GetNamespace(), desired.GetName())
	}
}

// observeItem judges an item without writing: missing, drifted or ready.
func observeItem(res *graph.Resource, desired, existing *unstructured.Unstructured) itemResult {
	if existing == nil {
		return itemResult{missing: true, why: objectName(desired) + " does not exist (observing: kroscope does not create it)"}
	}
	out := itemResult{observed: existing}
	if path, same := drift(desired, existing); !same {
		out.drifted = true
		out.why = fmt.Sprintf("%s differs from the desired object at %s (observing: not corrected)", objectName(existing), path)
	}
	ready, reason, err := res.IsReady(existing.Object)
	if err != nil && !graph.IsDataPending(err) {
		return itemResult{observed: existing, state: failedState(err), err: graph.OnItem(err, fmt.Sprintf("resource %s item %s", res.ID, objectName(existing)))}
	}
	out.ready = ready
	if !ready && !out.drifted {
		out.why = fmt.Sprintf("%s: %s", objectName(existing), reason)
	}
	return out
}

// collectionState folds the items' results into the node's verdict, in the
// order a single resource would report them: a failure first, then
// deletion, absence, readiness, drift, and finally what was written. The
// observed items are readable by status always, by dependents only when
// every item is ready.
func collectionState(results []itemResult, observed []*unstructured.Unstructured) result {
	n := len(results)
	var errs, fails, deleting, missing, unready, drifted []int
	created, updated := false, false
	settled, adopted := true, true
	for i, ir := range results {
		switch {
		case ir.err != nil && ir.state == ResourceStateError:
			errs = append(errs, i)
		case ir.err != nil:
			fails = append(fails, i)
		case ir.deleting:
			deleting = append(deleting, i)
		case ir.missing:
			missing = append(missing, i)
		case !ir.ready:
			unready = append(unready, i)
		case ir.drifted:
			drifted = append(drifted, i)
		}
		created = created || ir.created
		updated = updated || ir.updated
		if ir.created || ir.updated {
			settled = settled && ir.settled
		}
		if ir.updated {
			adopted = adopted && ir.adopted
		}
	}
	list := make([]any, 0, len(observed))
	for _, o := range observed {
		list = append(list, o.Object)
	}
	out := result{value: list, settled: (created || updated) && settled, adopted: updated && adopted}
	switch {
	case len(errs) > 0:
		out.verdict = errored(itemsErr(errs, n, results))
	case len(fails) > 0:
		out.verdict = failed(itemsErr(fails, n, results))
	case len(deleting) > 0:
		out.verdict = verdict{state: ResourceStateDeleting, reason: itemsWhy(deleting, n, "being deleted", results)}
	case len(missing) > 0:
		out.verdict = pending(itemsWhy(missing, n, "missing", results))
	case len(unready) > 0:
		out.verdict = verdict{state: ResourceStateWaitingForReadiness, reason: itemsWhy(unready, n, "not ready", results)}
	case len(drifted) > 0:
		out.verdict = verdict{state: ResourceStateInProgress, reason: itemsWhy(drifted, n, "drifted", results)}
	default:
		out.ready, out.verdict = true, verdict{state: writtenState(created, updated)}
	}
	return out
}

// itemsErr is the first failing item's error, counted.
func itemsErr(idx []int, n int, results []itemResult) error {
	if len(idx) == 1 && n == 1 {
		return results[idx[0]].err
	}
	return fmt.Errorf("%d of %d items failed; first: %w", len(idx), n, results[idx[0]].err)
}

// itemsWhy says how many items are held and why the first one is.
func itemsWhy(idx []int, n int, what string, results []itemResult) string {
	return fmt.Sprintf("%d of %d items %s; item %d: %s", len(idx), n, what, idx[0], results[idx[0]].why)
}

// listObject wraps objects in a v1 List, so a collection's desired and
// observed items show like any object.
func listObject(objs []*unstructured.Unstructured) *unstructured.Unstructured {
	items := make([]any, 0, len(objs))
	for _, o := range objs {
		items = append(items, o.Object)
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "List", "items": items}}
}
