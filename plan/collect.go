package plan

import (
	"cmp"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
	"github.com/kroscope/kroscope/reconciler/redact"
)

// objects turns what one reconcile over rec would have written, and what
// it observed, into the instance's plan entries, in graph order.
func objects(g *graph.Graph, rec *recorder, obs reconciler.Observation) []Object {
	out := fromWrites(g, rec)
	out = append(out, fromObservation(g, obs, out)...)
	order := map[string]int{}
	for i, id := range g.TopologicalOrder {
		order[id] = i + 1
	}
	rank := func(o Object) int {
		if o.Op == OpPrune || order[o.Resource] == 0 {
			return len(order) + 1
		}
		return order[o.Resource]
	}
	slices.SortStableFunc(out, func(a, b Object) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// fromWrites is the children's applies and deletes, the last one per
// object (a forced apply after a conflict replaces the conflict); the
// writes to the instance itself (finalizer, inventory, status) are the
// reconciler's bookkeeping, not changes a plan lists.
func fromWrites(g *graph.Graph, rec *recorder) []Object {
	last := map[objKey]int{}
	var keys []objKey
	for i, w := range rec.writes {
		if w.key.gvr == g.Instance.GVR || (w.verb != "apply" && w.verb != "delete") {
			continue
		}
		if _, seen := last[w.key]; !seen {
			keys = append(keys, w.key)
		}
		last[w.key] = i
	}
	var out []Object
	for _, k := range keys {
		if o, ok := fromWrite(rec, rec.writes[last[k]]); ok {
			out = append(out, o)
		}
	}
	return out
}

// fromWrite is one write's entry; ok false when it changes nothing.
func fromWrite(rec *recorder, w write) (Object, bool) {
	live := rec.live[w.key]
	ref := live
	if w.sent != nil {
		ref = w.sent
	}
	o := Object{Namespace: w.key.namespace, Name: w.key.name, ClientSide: w.clientSide}
	if ref != nil {
		o.Kind, o.Resource = ref.GetKind(), ref.GetLabels()[metadata.NodeIDLabel]
	}
	switch {
	case w.verb == "delete" && apierrors.IsNotFound(w.err):
		return o, false
	case w.err != nil:
		o.Op, o.Message = OpFail, rec.red.String(w.err.Error())
	case w.verb == "delete":
		o.Op = OpPrune
	default:
		o.Op, o.Fields = OpChange, Diff(objectOf(live), objectOf(w.after))
		if live == nil {
			o.Op = OpCreate
		} else if len(o.Fields) == 0 {
			return o, false
		}
		o.Fields = Mask(o.Fields, redact.IsSecret(w.after.Object), &rec.red)
	}
	return o, true
}

func objectOf(u *unstructured.Unstructured) map[string]any {
	if u == nil {
		return nil
	}
	return u.Object
}

// fromObservation is what failed or waits without a write: a template
// that does not render (CEL), an object another owner holds, a resource
// waiting for a dependency; and an instance that failed as a whole.
func fromObservation(g *graph.Graph, obs reconciler.Observation, have []Object) []Object {
	written := map[string]bool{}
	failed := false
	for _, o := range have {
		written[o.Resource] = true
		failed = failed || o.Op == OpFail
	}
	var out []Object
	for _, id := range g.TopologicalOrder {
		d := obs.Resources[id]
		if d == nil || written[id] || d.External {
			continue
		}
		o := Object{Resource: id, Kind: d.GVK.Kind, Namespace: d.Namespace, Name: d.Name}
		switch d.State {
		case reconciler.ResourceStateFailed, reconciler.ResourceStateError:
			o.Op, o.Message, failed = OpFail, errText(d.Err), true
		case reconciler.ResourceStatePending, reconciler.ResourceStateWaitingForExternalResource, reconciler.ResourceStateInProgress:
			o.Op, o.Message = OpPending, d.WaitingFor
			if o.Message == "" {
				o.Message = errText(d.Err)
			}
		default:
			continue
		}
		out = append(out, o)
	}
	if st := obs.State.State; !failed && (st == reconciler.InstanceStateError || st == reconciler.InstanceStateFailed) {
		out = append(out, Object{Kind: g.Instance.GVK.Kind, Namespace: obs.Namespace, Name: obs.Name, Op: OpFail, Message: obs.Message})
	}
	return out
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
