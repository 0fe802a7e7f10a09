package engine

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kroscope/kroscope/engine/packed"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
)

// Resource states that mean the object exists as kroscope wants it, or is
// being waited on after it was applied.
var appliedStates = map[string]bool{
	reconciler.ResourceStateCreated: true, reconciler.ResourceStateUpdating: true,
	reconciler.ResourceStateSynced: true, reconciler.ResourceStateWaitingForReadiness: true,
}

// deletionStates are a child's states while its instance is deleted.
var deletionStates = map[string]bool{
	reconciler.ResourceStatePendingDeletion: true, reconciler.ResourceStateDeleting: true, reconciler.ResourceStateDeleted: true,
}

// neverCreated reports whether a child that deletion found absent (DELETED)
// was never there: this engine never applied or found it, and no earlier
// pass of the deletion saw it waiting to go. An excluded (includeWhen) or
// never-rendered child is not DELETED: nothing was. Without an earlier
// state (an engine started during the deletion) the reconciler's word
// stands.
func neverCreated(st string, firstApplied time.Time, prev *state.Resource) bool {
	if st != reconciler.ResourceStateDeleted || !firstApplied.IsZero() || prev == nil {
		return false
	}
	return !deletionStates[prev.State]
}

// observer turns each reconcile's Observation of s's instances into the
// instance's state in store; keep turns an observed object into the value
// the state keeps (reader.kept).
func observer(store *state.Store, s *served, keep func(*graph.Resource, *unstructured.Unstructured) packed.Object) reconciler.Observer {
	return func(o reconciler.Observation) {
		key := state.InstanceKey{Resource: s.resource, Namespace: o.Namespace, Name: o.Name}
		now := o.Start.Add(o.Duration)
		if now.IsZero() {
			now = time.Now()
		}
		if o.Gone {
			// The row leaves the table when the informer sees the API
			// server remove the instance, not when kroscope lets go of it:
			// until then the finished teardown stays on screen.
			if o.Deleting {
				store.UpdateExisting(key, func(in *state.Instance) {
					in.Deleting = true
					in.State = reconciler.InstanceStateDeleting
					in.Message = o.Message + "; waiting for the API server to remove the instance"
					in.Reconciles++
					in.LastReconcile, in.LastDuration = o.Start, o.Duration
					in.Resources = resources(s.graph, o, in, now, keep)
				})
			}
			return
		}
		// UpdateExisting: the informer's add put the instance in the state
		// before it was queued, and its delete took it out. A reconcile
		// still running when the API server removed the instance (its
		// last write answers NotFound) must not bring the row back, where
		// it would stay for good.
		store.UpdateExisting(key, func(in *state.Instance) {
			in.Graph = s.graph.Name
			if o.UID != "" {
				in.UID = string(o.UID)
			}
			if o.Generation != 0 {
				in.Generation = o.Generation
				in.ObservedGeneration = o.Generation
			}
			if in.Kind == "" {
				in.Kind = s.graph.Instance.GVK.Kind
				in.APIVersion = s.graph.Instance.GVK.GroupVersion().String()
			}
			in.Deleting = o.Deleting
			in.State = o.State.State
			in.Message = o.Message
			if in.Message == "" && o.State.ReconcileErr != nil {
				in.Message = o.State.ReconcileErr.Error()
			}
			in.Layers = s.graph.Layers
			in.Serving = s.serving
			in.Reconciles++
			in.LastReconcile = o.Start
			in.LastDuration = o.Duration
			prev := in.Resources
			in.Resources = resources(s.graph, o, in, now, keep)
			in.LastError = instanceError(in, now)
			in.Log = state.AppendBounded(in.Log, decisions(prev, in.Resources, in, o.Duration, now)...)
		})
	}
}

// resources builds the resource list in topological order, keeping the
// FirstApplied and Ready times of the previous value.
//
// keep turns an observed object into the value the state keeps.
func resources(g *graph.Graph, o reconciler.Observation, prev *state.Instance, now time.Time, keep func(*graph.Resource, *unstructured.Unstructured) packed.Object) []state.Resource {
	out := make([]state.Resource, 0, len(g.TopologicalOrder))
	for _, id := range g.TopologicalOrder {
		r := baseResource(g.Resources[id])
		if d := o.Resources[id]; d != nil {
			r.Name, r.Namespace = d.Name, d.Namespace
			if g.Resources[id].IsList() {
				r.Name = collectionName(d)
			}
			r.State = d.State
			if d.Err != nil {
				r.Err = d.Err.Error()
			}
			r.WaitingFor = d.WaitingFor
			r.ReadyChecks = readyChecks(d.ReadyChecks)
			var observed map[string]any
			if d.Observed != nil {
				r.Observed = keep(g.Resources[id], d.Observed)
				observed = d.Observed.Object
			}
			if d.Desired != nil {
				r.DesiredHash = d.Desired.GetAnnotations()[metadata.DesiredHashAnnotation]
				r.Desired = packDesired(d.Desired.Object, observed, &r, prev.Resource(id))
			}
		}
		if rs := o.State.ResourceStates[id]; rs != nil {
			if r.State == "" {
				r.State = rs.State
			}
			if r.Err == "" && rs.Err != nil {
				r.Err = rs.Err.Error()
			}
		}
		var lastErr *state.ErrorMemory
		old := prev.Resource(id)
		if old != nil {
			r.FirstApplied, r.Ready = old.FirstApplied, old.Ready
			lastErr = old.LastError
			if r.Name == "" && deletionStates[r.State] {
				// Deletion finds children by their labels and names none:
				// the row keeps the object's name, not "(not rendered)".
				r.Name, r.Namespace = old.Name, old.Namespace
			}
		}
		if neverCreated(r.State, r.FirstApplied, old) {
			r.State, r.WaitingFor = reconciler.ResourceStateSkipped, "never created: nothing to delete"
		}
		r.LastError = state.RememberError(lastErr, r.Err, "", now)
		if r.FirstApplied.IsZero() && (!r.Observed.IsZero() || appliedStates[r.State]) {
			r.FirstApplied = now
		}
		if r.Ready.IsZero() && !r.FirstApplied.IsZero() && r.State == reconciler.ResourceStateSynced {
			r.Ready = now
		}
		out = append(out, r)
	}
	return out
}

// packDesired encodes the desired object obj of r for the state, relative
// to the observed one when there is one (mostly the same fields: the delta
// is a few paths). A converged reconcile renders what it rendered before:
// with the same hash against the same observed bytes, old's encoding is
// reused without encoding again, and equal bytes are shared, so the state
// keeps one copy per version, not one per reconcile. An object that cannot
// be encoded (none can: it was rendered as JSON) is kept as none.
func packDesired(obj, observed map[string]any, r, old *state.Resource) packed.Object {
	if old != nil && r.DesiredHash != "" && old.DesiredHash == r.DesiredHash && old.Observed.Equal(r.Observed) && !old.Desired.IsZero() {
		return old.Desired
	}
	p, err := packed.PackAgainst(obj, observed)
	if err != nil {
		return packed.Object{}
	}
	if old != nil && p.Equal(old.Desired) {
		return old.Desired
	}
	return p
}

// operandWidth bounds an operand's value on screen: a whole status object
// is not what a reader of "x.status.conditions == ..." needs to see.
const operandWidth = 120

func readyChecks(cs []graph.Check) []state.ReadyCheck {
	if len(cs) == 0 {
		return nil
	}
	out := make([]state.ReadyCheck, len(cs))
	for i, c := range cs {
		rc := state.ReadyCheck{Expr: c.Source, Result: c.Result, OK: c.OK}
		for _, o := range c.Operands {
			op := state.Operand{Path: o.Path, Missing: o.Missing}
			if !o.Missing {
				op.Value = graph.FormatValue(o.Value, operandWidth)
			}
			rc.Operands = append(rc.Operands, op)
		}
		out[i] = rc
	}
	return out
}

// instanceError is the instance's error memory after a reconcile: its
// message while it is in error, naming the first resource in error.
func instanceError(in *state.Instance, now time.Time) *state.ErrorMemory {
	if in.Phase().Class() != state.ClassFailed {
		return state.RememberError(in.LastError, "", "", now)
	}
	res := ""
	for i := range in.Resources {
		if in.Resources[i].Err != "" {
			res = in.Resources[i].ID
			break
		}
	}
	msg := in.Message
	if msg == "" {
		msg = in.Phase().Word()
	}
	return state.RememberError(in.LastError, msg, res, now)
}

// collectionName is what tables show in a collection's name column: its
// item count (desired when rendered, else observed), or "" before either.
func collectionName(d *reconciler.ResourceDetail) string {
	list := d.Desired
	if list == nil {
		list = d.Observed
	}
	if list == nil {
		return ""
	}
	items, _ := list.Object["items"].([]any)
	if len(items) == 1 {
		return "1 item"
	}
	return fmt.Sprintf("%d items", len(items))
}

func baseResource(gr *graph.Resource) state.Resource {
	r := state.Resource{
		ID:           gr.ID,
		APIVersion:   gr.GVK.GroupVersion().String(),
		Kind:         gr.GVK.Kind,
		External:     gr.External,
		Dependencies: gr.Dependencies,
	}
	for _, x := range gr.ReadyWhen {
		r.ReadyWhen = append(r.ReadyWhen, x.Source)
	}
	for _, x := range gr.IncludeWhen {
		r.IncludeWhen = append(r.IncludeWhen, x.Source)
	}
	return r
}

// pendingResources is the resource list of an instance not reconciled yet.
func pendingResources(g *graph.Graph) []state.Resource {
	out := make([]state.Resource, 0, len(g.TopologicalOrder))
	for _, id := range g.TopologicalOrder {
		r := baseResource(g.Resources[id])
		r.State = reconciler.ResourceStatePending
		out = append(out, r)
	}
	return out
}
