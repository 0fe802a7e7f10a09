package reconciler

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kroscope/kroscope/reconciler/graph"
)

// pruneNode deletes this instance's objects of node nodeID (found by their
// labels, deleted only when the labels prove the instance owns them) that
// keep does not keep. It returns the objects it deleted and those already
// on their way out, which it leaves alone.
func (w *writer) pruneNode(gvr schema.GroupVersionResource, nodeID string, keep func(*unstructured.Unstructured) bool) (deleted, terminating []string, err error) {
	objs, err := w.aset.nodeChildren(gvr, nodeID)
	if err != nil {
		return nil, nil, err
	}
	for i := range objs {
		o := &objs[i]
		if keep(o) || !w.aset.provenOwned(o) {
			continue
		}
		if o.GetDeletionTimestamp() != nil {
			terminating = append(terminating, objectName(o))
			continue
		}
		if err := deleteObject(w.io, gvr, o); err != nil {
			return deleted, terminating, err
		}
		deleted = append(deleted, objectName(o))
	}
	return deleted, terminating, nil
}

// pruneExcluded deletes every object labelled as this instance's res, and
// names those still on their way out.
func (w *writer) pruneExcluded(res *graph.Resource) ([]string, error) {
	gvr, served, err := w.kinds.cached(res)
	if err != nil {
		return nil, err
	}
	if !served {
		// A kind the API server does not serve has no objects to prune;
		// asking again (resetting the mapper) on every pass would only
		// load the API server with discovery requests.
		return nil, nil
	}
	deleted, terminating, err := w.pruneNode(gvr, res.ID, func(*unstructured.Unstructured) bool { return false })
	if err != nil {
		return nil, err
	}
	return append(deleted, terminating...), nil
}

// pruneReplaced deletes the objects labelled as this instance's res other
// than current.
func (w *writer) pruneReplaced(res *graph.Resource, current *unstructured.Unstructured) error {
	gvr, _, err := w.kinds.resolve(res)
	if err != nil {
		return err
	}
	deleted, _, err := w.pruneNode(gvr, res.ID, func(o *unstructured.Unstructured) bool { return o.GetUID() == current.GetUID() })
	for _, name := range deleted {
		w.ev.event("Normal", "Pruned", fmt.Sprintf("resource %s: deleted %s, replaced by %s", res.ID, name, objectName(current)))
	}
	return err
}

// pruneCollection deletes the objects labelled as this instance's node
// that are not items any more (a name left the list, or the collection
// shrank), only those the labels prove the instance owns.
func (w *writer) pruneCollection(res *graph.Resource, gvr schema.GroupVersionResource, items []*unstructured.Unstructured) error {
	want := make(map[string]bool, len(items))
	for _, it := range items {
		want[it.GetNamespace()+"/"+it.GetName()] = true
	}
	pruned, _, err := w.pruneNode(gvr, res.ID, func(o *unstructured.Unstructured) bool { return want[o.GetNamespace()+"/"+o.GetName()] })
	if len(pruned) > 0 {
		w.ev.event("Normal", "Pruned", fmt.Sprintf("resource %s: deleted %s, no longer in the collection", res.ID, strings.Join(pruned, ", ")))
	}
	return err
}
