package reconciler

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
	"github.com/kroscope/kroscope/reconciler/redact"
	"github.com/kroscope/kroscope/reconciler/requeue"
)

// run is the fresh runtime of one Reconcile: built at its start, dropped at
// its end. Nothing in it survives to the next reconcile.
type run struct {
	c        *Controller
	ctx      context.Context
	log      logr.Logger
	opts     Options
	recorder record.EventRecorder
	now      func() time.Time
	req      ctrl.Request
	// red removes the values of the Secrets this reconcile reads from
	// every message it hands out (see redact.go).
	red *redact.Set

	objs     *client.Objects // reads and writes for this instance (maybe impersonating)
	sa       string          // impersonated ServiceAccount, "" for the own identity
	inst     *unstructured.Unstructured
	gone     bool
	deleting bool

	// managedErr is set when the finalizer/labels could not be written.
	managedErr error
	// mu guards what concurrent resources of one layer write in common:
	// forbidden and the two Vars maps (each detail is written only by the
	// goroutine of its own resource).
	mu sync.Mutex
	// forbidden records a 403 from the impersonated client (error metric).
	forbidden bool

	state   string
	message string
	details map[string]*ResourceDetail
	// readyVars hold schema and the resources observed and ready: what
	// templates, includeWhen and dependents may read.
	readyVars graph.Vars
	// allVars hold every observed resource, ready or not (status reads them).
	allVars graph.Vars
	// projectedStatus are the instance status fields the graph projects.
	projectedStatus map[string]any

	// suspended is set when the instance's reconcile annotation pauses it.
	suspended bool
	// invMu guards the ApplySet inventory while the layers run: inv is what
	// the instance records, invInst the instance as the last inventory
	// write returned it (nil when none), kept the UIDs of the children this
	// pass applied or found in place.
	invMu   sync.Mutex
	inv     metadata.Inventory
	invInst *unstructured.Unstructured
	kept    map[types.UID]bool
	// pruning is set while inventory prune still deletes objects.
	pruning bool
	// settledWrites are the resources this pass created or updated whose
	// object, as the API server returned it, already holds the desired one
	// (guarded by mu).
	settledWrites map[string]bool
	// asid is the instance's ApplySet ID (applySetID).
	asidOnce sync.Once
	asid     string
	// orphanErrs and otherLeft are deletion's errors for, and count of,
	// members whose resource is no longer in the graph.
	orphanErrs []string
	otherLeft  int
}

func (r *run) reconcile() error {
	r.initDetails()
	// The identity is chosen from the namespace alone, so even reading the
	// instance goes through it: everything for the instance uses one client.
	cs, sa, err := r.c.executionClient(r.req.Namespace)
	if err != nil {
		r.state, r.message = InstanceStateError, err.Error()
		return err
	}
	r.objs, r.sa = r.objects(cs, sa), sa
	defer func() {
		if r.forbidden && r.sa != "" {
			impersonationErrors.WithLabelValues(r.req.Namespace, r.sa, errTypePermissions).Inc()
		}
	}()

	inst, err := r.c.getInstance(r.ctx, r.objs, r.req.Namespace, r.req.Name)
	if err != nil {
		r.noteErr(err)
		r.state, r.message = InstanceStateError, err.Error()
		return err
	}
	if inst == nil {
		r.gone = true
		r.message = "instance not found"
		return nil
	}
	r.inst = inst

	if inst.GetDeletionTimestamp() != nil {
		r.deleting = true
		return r.deletion()
	}
	return r.reconcileInstance()
}

// initDetails gives every resource a detail entry in topological order.
func (r *run) initDetails() {
	for _, id := range r.c.rg.TopologicalOrder {
		res := r.c.rg.Resources[id]
		if _, ok := r.details[id]; ok || res == nil {
			continue
		}
		r.details[id] = &ResourceDetail{ID: id, GVK: res.GVK, External: res.External, State: ResourceStatePending}
	}
}

// schemaVar is the instance as expressions see it: without status.
// Only what expressions see is copied: the status (often most of an
// instance) and managedFields are left out before copying, not after.
func schemaVar(inst *unstructured.Unstructured) map[string]any {
	obj := make(map[string]any, len(inst.Object))
	for k, v := range inst.Object {
		switch k {
		case "status":
			continue
		case "metadata":
			if md, ok := v.(map[string]any); ok {
				cp := make(map[string]any, len(md))
				for mk, mv := range md {
					if mk != "managedFields" {
						cp[mk] = runtime.DeepCopyJSONValue(mv)
					}
				}
				obj[k] = cp
				continue
			}
		}
		obj[k] = runtime.DeepCopyJSONValue(v)
	}
	return obj
}

func (r *run) instanceRef() metadata.InstanceRef {
	gvk := r.inst.GroupVersionKind()
	return metadata.InstanceRef{UID: r.inst.GetUID(), Name: r.inst.GetName(), Namespace: r.inst.GetNamespace(),
		Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind}
}

func (r *run) uid() types.UID { return r.inst.GetUID() }

// reconcileInstance is the create/update path.
func (r *run) reconcileInstance() error {
	r.initDetails()
	if !r.opts.Observe {
		if err := r.ensureManaged(); err != nil {
			if apierrors.IsConflict(err) {
				// Someone changed the instance meanwhile: read it again.
				r.state, r.message = InstanceStateInProgress, "instance changed while marking it managed; retrying"
				return requeue.Now(err)
			}
			r.noteErr(err)
			r.managedErr = err
			r.state = InstanceStateError
			r.message = "marking the instance as managed: " + err.Error()
			r.writeStatusBestEffort()
			return err
		}
	}

	if metadata.Suspended(r.inst.GetAnnotations()) {
		return r.suspend()
	}
	if msg, err := r.nestingTooDeep(); err != nil || msg != "" {
		// Reconciling would create the next level down: refuse.
		r.state, r.message = InstanceStateFailed, msg
		if err != nil {
			r.noteErr(err)
			r.state, r.message = InstanceStateError, "checking the nesting depth: "+err.Error()
		}
		r.writeStatusBestEffort()
		if err != nil {
			return err
		}
		return requeue.None(errors.New(msg))
	}
	if msg := r.missingSpec(); msg != "" {
		// Nothing an expression reads from spec will ever arrive: say so
		// instead of waiting, and touch no child (a spec deleted later
		// prunes nothing). Editing the instance wakes it.
		r.state, r.message = InstanceStateFailed, msg
		r.writeStatusBestEffort()
		return requeue.None(errors.New(msg))
	}
	if !r.opts.Observe {
		inv, err := r.graphInventory()
		if err != nil {
			// A hand-broken inventory: applying children it does not record
			// would hide them from deletion. Someone must repair it.
			r.state, r.message = InstanceStateError, err.Error()
			r.writeStatusBestEffort()
			return err
		}
		r.inv = inv
	}

	r.readyVars = graph.Vars{graph.SchemaIdentifier: schemaVar(r.inst)}
	r.allVars = graph.Vars{graph.SchemaIdentifier: r.readyVars[graph.SchemaIdentifier]}
	r.reconcileLayers()
	if r.invInst != nil {
		r.inst = r.invInst
	}

	r.state, r.message = r.instanceState()
	if r.settlingOwnWrites() && r.promoteSettledWrites() {
		r.state, r.message = r.instanceState()
	}
	if !r.opts.Observe && r.settledForPrune() && r.needsPrune() {
		leaving, err := r.pruneInventory()
		switch {
		case err != nil:
			r.noteErr(err)
			if r.state != InstanceStateError {
				r.state, r.message = InstanceStateError, "pruning: "+err.Error()
			}
		case leaving && r.state == InstanceStateActive:
			r.pruning = true
			r.state, r.message = InstanceStateInProgress, "pruning children of resources no longer in the graph"
		}
	}
	projected, serr := r.c.rg.RenderStatus(r.allVars)
	r.projectedStatus = projected
	if serr != nil && r.state != InstanceStateError {
		// A status expression that fails (not merely pending) cannot fix
		// itself: same treatment as a template's CEL error.
		r.state, r.message = InstanceStateFailed, "status: "+serr.Error()
	}
	retErr := r.resultError()

	if r.settlingOwnWrites() {
		// Only objects this pass created are not settled yet, and one of
		// them came back from the API server different from what was
		// applied: the next pass (now) compares again, and writes the
		// status then. Writing the in-between status would cost every new
		// instance a write and an event the user never needs.
		return requeue.Now(errors.New(r.message))
	}

	_, err := r.writeStatus()
	if err != nil {
		r.noteErr(err)
		if apierrors.IsConflict(err) {
			return requeue.Now(fmt.Errorf("instance changed while writing status: %w", err))
		}
		if r.state != InstanceStateError {
			r.state, r.message = InstanceStateError, "writing status: "+err.Error()
		}
		return fmt.Errorf("writing status: %w", err)
	}
	return retErr
}

// writeStatusBestEffort writes the status on a path that returns another
// error (or a deliberate no-requeue): a failed write is only logged, since
// the next pass writes it again.
func (r *run) writeStatusBestEffort() {
	if _, err := r.writeStatus(); err != nil {
		r.log.V(1).Info("status write failed", "error", err.Error())
	}
}

// missingSpec is the message for an instance that has no spec while the
// graph requires fields in it, "" otherwise. The API server admits such an
// instance (the root of kro's instance CRD, and so of kroscope's, requires
// nothing), and an expression reading spec would wait for ever.
func (r *run) missingSpec() string {
	if _, has := r.inst.Object["spec"]; has {
		return ""
	}
	req := r.c.rg.Instance.RequiredSpecFields()
	if len(req) == 0 {
		return ""
	}
	fields := make([]string, len(req))
	for i, f := range req {
		fields[i] = "spec." + f
	}
	return fmt.Sprintf("the instance has no spec, and %s requires %s: add a spec that sets them", r.c.rg.Instance.GVK.Kind, strings.Join(fields, ", "))
}

// instanceState derives the instance state and its one-line message from
// the resource states.
func (r *run) instanceState() (string, string) {
	var errs, fails, waits []string
	for _, id := range r.c.rg.TopologicalOrder {
		d := r.details[id]
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

// settlingOwnWrites reports whether the instance waits only for objects
// this pass created (or changed while creating others): every resource is
// SYNCED, SKIPPED, CREATED or UPDATING, and one at least is CREATED. A
// resource that is UPDATING on every pass (someone fights over it) never
// qualifies alone, so this cannot loop.
func (r *run) settlingOwnWrites() bool {
	if r.state != InstanceStateInProgress || r.managedErr != nil {
		return false
	}
	created := false
	for _, d := range r.details {
		switch d.State {
		case ResourceStateCreated:
			created = true
		case ResourceStateSynced, ResourceStateSkipped, ResourceStateUpdating:
		default:
			return false
		}
	}
	return created
}

// noteSettledWrite records that the object resource id's apply returned
// already holds the desired object.
func (r *run) noteSettledWrite(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.settledWrites == nil {
		r.settledWrites = map[string]bool{}
	}
	r.settledWrites[id] = true
}

// promoteSettledWrites marks the CREATED and UPDATING resources SYNCED when
// the object every one of their applies returned holds the desired object
// (and, being marked so, passed readiness on it): the next pass would read
// back those same objects (the Reader serves what a write returned) and
// find nothing to do, so this pass concludes for it, without a second
// reconcile per new instance. It reports whether it promoted them; when
// one write is not settled it changes nothing.
func (r *run) promoteSettledWrites() bool {
	var ids []string
	for id, d := range r.details {
		switch d.State {
		case ResourceStateCreated, ResourceStateUpdating:
			if !r.settledWrites[id] {
				return false
			}
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		r.details[id].State = ResourceStateSynced
	}
	return len(ids) > 0
}

// resultError maps the outcome to the typed error the queue reads.
func (r *run) resultError() error {
	switch r.state {
	case InstanceStateError:
		return errors.New(r.message)
	case InstanceStateFailed:
		// Retrying cannot help: only a spec change (a new generation) can.
		return requeue.None(errors.New(r.message))
	case InstanceStateInProgress:
		return requeue.After(r.c.cfg.DefaultRequeueDuration, errors.New(r.message))
	}
	return nil
}

// noteErr records 403s so the impersonation error metric counts them.
func (r *run) noteErr(err error) {
	if apierrors.IsForbidden(err) {
		r.mu.Lock()
		r.forbidden = true
		r.mu.Unlock()
	}
}

func (r *run) setVar(vars graph.Vars, id string, obj map[string]any) {
	r.red.AddSecret(obj)
	r.mu.Lock()
	vars[id] = obj
	r.mu.Unlock()
}

// observation builds what the Observer receives, its messages redacted.
func (r *run) observation() Observation {
	details := r.redactedDetails()
	o := Observation{
		GVR:       r.c.gvr,
		Namespace: r.req.Namespace,
		Name:      r.req.Name,
		Gone:      r.gone,
		Deleting:  r.deleting,
		Message:   r.red.String(r.message),
		Resources: details,
	}
	if r.inst != nil {
		o.UID = r.inst.GetUID()
		o.Generation = r.inst.GetGeneration()
	}
	o.State = InstanceState{State: r.state, ResourceStates: map[string]*ResourceState{}}
	if r.state == InstanceStateError || r.state == InstanceStateFailed {
		o.State.ReconcileErr = errors.New(o.Message)
	}
	for id, d := range details {
		o.State.ResourceStates[id] = &ResourceState{State: d.State, Err: d.Err}
	}
	return o
}
