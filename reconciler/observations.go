package reconciler

import (
	"fmt"
	"strings"

	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/redact"
)

// observations are what the resources' steps found this pass: the
// instance's graph state, as kro's runtime keeps it. The layers write them
// between layers only (see run.reconcileLayers), never while the resources
// of a layer run, so they need no lock.
type observations struct {
	g *graph.Graph
	// red learns the values of the Secrets recorded (see redact.go).
	red     *redact.Set
	details map[string]*ResourceDetail
	// readyVars hold schema and the resources observed and ready: what
	// templates, includeWhen and dependents may read.
	readyVars graph.Vars
	// allVars hold every observed resource, ready or not (status reads them).
	allVars graph.Vars
	// settled are the resources this pass created or updated whose object,
	// as the API server returned it, already holds the desired one;
	// adopted those whose update took the object over from kro.
	settled, adopted map[string]bool
}

// newObservations gives every resource of g a PENDING detail.
func newObservations(g *graph.Graph, red *redact.Set) observations {
	details := make(map[string]*ResourceDetail, len(g.TopologicalOrder))
	for _, id := range g.TopologicalOrder {
		if res := g.Resources[id]; res != nil {
			details[id] = &ResourceDetail{ID: id, GVK: res.GVK, External: res.External, State: ResourceStatePending}
		}
	}
	return observations{g: g, red: red, details: details}
}

// detail is resource id's detail, nil for an id not in the graph.
func (o *observations) detail(id string) *ResourceDetail { return o.details[id] }

// seed makes schema (the instance as expressions see it) readable.
func (o *observations) seed(schema map[string]any) {
	o.readyVars = graph.Vars{graph.SchemaIdentifier: schema}
	o.allVars = graph.Vars{graph.SchemaIdentifier: schema}
}

// ready are the values templates and dependents read; all those status
// reads.
func (o *observations) ready() graph.Vars { return o.readyVars }
func (o *observations) all() graph.Vars   { return o.allVars }

// record makes res the detail of resource id and its value readable by
// the expressions of later layers and status. Every object readable by
// expressions is a value redaction must know (see redact.go).
func (o *observations) record(id string, res result) {
	d := o.details[id]
	d.State, d.WaitingFor, d.Err = res.state, res.reason, res.err
	d.Name, d.Namespace = res.name, res.namespace
	d.Desired, d.Observed, d.ReadyChecks = res.desired, res.observed, res.readyChecks
	if res.settled {
		if o.settled == nil {
			o.settled = map[string]bool{}
		}
		o.settled[id] = true
	}
	if res.adopted {
		if o.adopted == nil {
			o.adopted = map[string]bool{}
		}
		o.adopted[id] = true
	}
	if res.value == nil {
		return
	}
	switch v := res.value.(type) {
	case map[string]any:
		o.red.AddSecret(v)
	case []any:
		for _, it := range v {
			if obj, ok := it.(map[string]any); ok {
				o.red.AddSecret(obj)
			}
		}
	}
	o.allVars[id] = res.value
	if res.ready {
		o.readyVars[id] = res.value
	}
}

// gate decides whether res may render this pass from what earlier layers
// found: a skipped dependency or a false includeWhen skip it (skip says
// why); includeWhen's data or a dependency not yet ready holds it back.
// held is true with the verdict when it may not render.
func (o *observations) gate(res *graph.Resource) (v verdict, skip string, held bool) {
	// Exclusion is contagious: a dependent of a skipped resource is skipped.
	for _, dep := range res.Dependencies {
		if dd := o.details[dep]; dd != nil && dd.State == ResourceStateSkipped {
			return verdict{}, fmt.Sprintf("depends on %s, which is skipped", dep), true
		}
	}
	// includeWhen reads schema and ready dependencies only; anything not yet
	// there means wait.
	if len(res.IncludeWhen) > 0 {
		included, err := res.IsIncluded(o.readyVars)
		switch {
		case err != nil && graph.IsDataPending(err):
			return pending("includeWhen: " + pendingText(err)), "", true
		case err != nil:
			return failed(fmt.Errorf("resource %s: includeWhen: %w", res.ID, err)), "", true
		case !included:
			return verdict{}, "includeWhen is false", true
		}
	}
	// Every dependency must be observed and ready before this one renders.
	for _, dep := range res.Dependencies {
		if _, ok := o.readyVars[dep]; ok {
			continue
		}
		// Name the dependency and its state only: its own entry says why,
		// and nesting the reasons makes a chain's message grow with depth.
		why := strings.ToLower(strings.ReplaceAll(o.details[dep].State, "_", " "))
		return pending(fmt.Sprintf("waiting for %s (%s)", dep, why)), "", true
	}
	return verdict{}, "", false
}

// instanceState derives the instance state and its one-line message from
// the resource states.
func (o *observations) instanceState() (string, string) {
	var errs, fails, waits []string
	for _, id := range o.g.TopologicalOrder {
		d := o.details[id]
		switch d.State {
		case ResourceStateSynced, ResourceStateSkipped:
		case ResourceStateError:
			errs = append(errs, fmt.Sprintf("%s: %v", id, d.Err))
		case ResourceStateFailed:
			fails = append(fails, fmt.Sprintf("%s: %v", id, d.Err))
		case ResourceStateCreated, ResourceStateUpdating:
			waits = append(waits, fmt.Sprintf("%s: %s", id, strings.ToLower(d.State)))
		default:
			w := d.WaitingFor
			if w == "" {
				w = strings.ToLower(d.State)
			}
			waits = append(waits, fmt.Sprintf("%s: %s", id, w))
		}
	}
	switch {
	case len(errs) > 0:
		return InstanceStateError, strings.Join(errs, "; ")
	case len(fails) > 0:
		return InstanceStateFailed, strings.Join(fails, "; ")
	case len(waits) > 0:
		return InstanceStateInProgress, strings.Join(waits, "; ")
	}
	return InstanceStateActive, "all resources are ready"
}

// onlyOwnWrites reports whether every resource is SYNCED, SKIPPED,
// CREATED or UPDATING, and one at least is CREATED (or UPDATING by
// adopting kro's object). A resource that is UPDATING on every pass
// (someone fights over it) never qualifies alone, so this cannot loop.
func (o *observations) onlyOwnWrites() bool {
	created := false
	for id, d := range o.details {
		switch d.State {
		case ResourceStateCreated:
			created = true
		case ResourceStateUpdating:
			// Adopting kro's object is a write of kroscope's own, once: an
			// instance kro left ACTIVE stays so, with no IN_PROGRESS between.
			created = created || o.adopted[id]
		case ResourceStateSynced, ResourceStateSkipped:
		default:
			return false
		}
	}
	return created
}

// promoteSettledWrites marks the CREATED and UPDATING resources SYNCED when
// the object every one of their applies returned holds the desired object
// (and, being marked so, passed readiness on it): the next pass would read
// back those same objects (the Reader serves what a write returned) and
// find nothing to do, so this pass concludes for it, without a second
// reconcile per new instance. It reports whether it promoted them; when
// one write is not settled it changes nothing.
func (o *observations) promoteSettledWrites() bool {
	var ids []string
	for id, d := range o.details {
		switch d.State {
		case ResourceStateCreated, ResourceStateUpdating:
			if !o.settled[id] {
				return false
			}
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		o.details[id].State = ResourceStateSynced
	}
	return len(ids) > 0
}

// settledForPrune reports whether this pass saw every resource through:
// nothing waits for data, nothing failed. Only then is a member that was
// not applied really an orphan (kro's rule).
func (o *observations) settledForPrune() bool {
	for _, id := range o.g.TopologicalOrder {
		switch o.details[id].State {
		case ResourceStateSynced, ResourceStateSkipped, ResourceStateCreated, ResourceStateUpdating, ResourceStateWaitingForReadiness:
		default:
			return false
		}
	}
	return true
}

// graphProblem says why the graph cannot be resolved for this instance (a
// kind it uses is not served), or "".
func (o *observations) graphProblem() string {
	for _, id := range o.g.TopologicalOrder {
		if d := o.details[id]; d.State == ResourceStateError && d.Err != nil && strings.Contains(d.Err.Error(), "is not served by the API server") {
			return d.Err.Error()
		}
	}
	return ""
}

func (o *observations) hasErrorDetail() bool {
	for _, d := range o.details {
		if d.State == ResourceStateError {
			return true
		}
	}
	return false
}

// childDeleting names, in kro's words, the first child that must finish
// deleting before the instance can go on, or "".
func (o *observations) childDeleting() string {
	for _, id := range o.g.TopologicalOrder {
		if d := o.details[id]; d.State == ResourceStateDeleting {
			ref := d.Name
			if d.Namespace != "" {
				ref = d.Namespace + "/" + ref
			}
			return fmt.Sprintf("resource %q for node %q is currently being deleted; waiting for deletion to complete before continuing reconciliation", ref, id)
		}
	}
	return ""
}

// suspended says on every resource that the instance is paused.
func (o *observations) suspended() {
	for _, d := range o.details {
		d.WaitingFor = "suspended"
	}
}

// redacted are copies of the details with their messages and names
// redacted (see redactedDetails).
func (o *observations) redacted() map[string]*ResourceDetail {
	return redactedDetails(o.red, o.details)
}
