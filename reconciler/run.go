package reconciler

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
	"github.com/kroscope/kroscope/reconciler/redact"
	"github.com/kroscope/kroscope/reconciler/requeue"
)

// run is the fresh runtime of one Reconcile: built at its start, dropped at
// its end. Nothing in it survives to the next reconcile. It holds what
// lives for the whole reconcile; what the steps decide is kept in its
// parts, each by what it is about: the resources (obs), the instance's
// ApplySet (aset) and the instance's outcome (out).
type run struct {
	c   *Controller
	ctx context.Context
	log logr.Logger
	// opts are the controller's options for this reconcile, with Now and
	// Recorder resolved (Recorder nil in observe mode: Events are writes)
	// and whether it observes decided.
	opts runOptions
	req  ctrl.Request
	// red removes the values of the Secrets this reconcile reads from
	// every message it hands out (see redact.go).
	red  *redact.Set
	objs *client.Objects // reads and writes for this instance (maybe impersonating)
	sa   string          // impersonated ServiceAccount, "" for the own identity
	// inst is the instance being reconciled, as last read or written.
	inst *unstructured.Unstructured

	obs  observations
	aset applySet
	out  outcome
}

// observations are what the resources' steps found this pass. The layers
// write them between layers only (see reconcileLayers), never while the
// resources of a layer run, so they need no lock.
type observations struct {
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

// applySet is the instance's ApplySet inventory while the layers run:
// written by the resources of a layer concurrently, so guarded by mu.
type applySet struct {
	// once computes id, the instance's ApplySet ID (applySetID).
	once sync.Once
	id   string
	mu   sync.Mutex
	// inv is what the instance records, inst the instance as the last
	// inventory write returned it (nil when none), kept the UIDs of the
	// children this pass applied or found in place.
	inv  metadata.Inventory
	inst *unstructured.Unstructured
	kept map[types.UID]bool
}

// outcome is what the reconcile concludes about the instance.
type outcome struct {
	state   string
	message string
	// gone: the instance no longer exists (or its finalizer was just
	// removed); deleting: it is being deleted; suspended: its reconcile
	// annotation pauses it; pruning: inventory prune still deletes objects.
	gone, deleting, suspended, pruning bool
	// managedErr is set when the finalizer/labels could not be written.
	managedErr error
	// forbidden records a 403 from the impersonated client (error metric);
	// set by concurrent resources.
	forbidden atomic.Bool
	// projectedStatus are the instance status fields the graph projects.
	projectedStatus map[string]any
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
		r.out.state, r.out.message = InstanceStateError, err.Error()
		return err
	}
	r.objs, r.sa = r.objects(cs, sa), sa
	defer func() {
		if r.out.forbidden.Load() && r.sa != "" {
			impersonationErrors.WithLabelValues(r.req.Namespace, r.sa, errTypePermissions).Inc()
		}
	}()

	inst, err := r.c.getInstance(r.ctx, r.objs, r.req.Namespace, r.req.Name)
	if err != nil {
		r.noteErr(err)
		r.out.state, r.out.message = InstanceStateError, err.Error()
		return err
	}
	if inst == nil {
		r.out.gone = true
		r.out.message = "instance not found"
		return nil
	}
	r.inst = inst

	if inst.GetDeletionTimestamp() != nil {
		r.out.deleting = true
		return r.deletion()
	}
	return r.reconcileInstance()
}

// initDetails gives every resource a detail entry in topological order.
func (r *run) initDetails() {
	for _, id := range r.c.rg.TopologicalOrder {
		res := r.c.rg.Resources[id]
		if _, ok := r.obs.details[id]; ok || res == nil {
			continue
		}
		r.obs.details[id] = &ResourceDetail{ID: id, GVK: res.GVK, External: res.External, State: ResourceStatePending}
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

// reconcileInstance is the create/update path: the instance steps that
// may end it early, then the layers, the instance's conclusion and its
// status.
func (r *run) reconcileInstance() error {
	r.initDetails()
	if s := r.markManaged(); s != nil {
		return r.halt(s)
	}
	if metadata.Suspended(r.inst.GetAnnotations()) {
		return r.suspend()
	}
	if s := r.precheck(); s != nil {
		return r.halt(s)
	}
	r.obs.readyVars = graph.Vars{graph.SchemaIdentifier: schemaVar(r.inst)}
	r.obs.allVars = graph.Vars{graph.SchemaIdentifier: r.obs.readyVars[graph.SchemaIdentifier]}
	r.reconcileLayers()
	if r.aset.inst != nil {
		r.inst = r.aset.inst
	}
	r.conclude()
	return r.finish()
}

// stop is the verdict of an instance step that ends the reconcile: the
// state and message to show, whether the status is written to say so, and
// the error that tells the queue what to do next (see requeue).
type stop struct {
	state, message string
	writeStatus    bool
	err            error
}

// halt ends the reconcile with s.
func (r *run) halt(s *stop) error {
	r.out.state, r.out.message = s.state, s.message
	if s.writeStatus {
		r.writeStatusBestEffort()
	}
	return s.err
}

// markManaged puts the finalizer, labels and inventory on the instance
// (see ensureManaged); nil when it may go on.
func (r *run) markManaged() *stop {
	if r.observing() {
		return nil
	}
	err := r.ensureManaged()
	switch {
	case err == nil:
		return nil
	case apierrors.IsConflict(err):
		// Someone changed the instance meanwhile: read it again.
		return &stop{state: InstanceStateInProgress, message: "instance changed while marking it managed; retrying", err: requeue.Now(err)}
	}
	r.noteErr(err)
	r.out.managedErr = err
	return &stop{state: InstanceStateError, message: "marking the instance as managed: " + err.Error(), writeStatus: true, err: err}
}

// precheck refuses an instance nested too deep or without the spec its
// graph needs, and reads its ApplySet inventory; nil when it may go on.
func (r *run) precheck() *stop {
	msg, err := r.nestingTooDeep()
	switch {
	case err != nil:
		r.noteErr(err)
		return &stop{state: InstanceStateError, message: "checking the nesting depth: " + err.Error(), writeStatus: true, err: err}
	case msg != "":
		// Reconciling would create the next level down: refuse.
		return &stop{state: InstanceStateFailed, message: msg, writeStatus: true, err: requeue.None(errors.New(msg))}
	}
	if msg := r.missingSpec(); msg != "" {
		// Nothing an expression reads from spec will ever arrive: say so
		// instead of waiting, and touch no child (a spec deleted later
		// prunes nothing). Editing the instance wakes it.
		return &stop{state: InstanceStateFailed, message: msg, writeStatus: true, err: requeue.None(errors.New(msg))}
	}
	if r.observing() {
		return nil
	}
	inv, err := r.graphInventory()
	if err != nil {
		// A hand-broken inventory: applying children it does not record
		// would hide them from deletion. Someone must repair it.
		return &stop{state: InstanceStateError, message: err.Error(), writeStatus: true, err: err}
	}
	r.aset.inv = inv
	return nil
}

// conclude derives the instance's state from its resources, promotes the
// writes that settled, prunes the inventory once the instance is settled,
// and projects the status fields.
func (r *run) conclude() {
	r.out.state, r.out.message = r.instanceState()
	if r.settlingOwnWrites() && r.promoteSettledWrites() {
		r.out.state, r.out.message = r.instanceState()
	}
	if !r.observing() && r.settledForPrune() && r.needsPrune() {
		r.prune()
	}
	projected, serr := r.c.rg.RenderStatus(r.obs.allVars)
	r.out.projectedStatus = projected
	if serr != nil && r.out.state != InstanceStateError {
		// A status expression that fails (not merely pending) cannot fix
		// itself: same treatment as a template's CEL error.
		r.out.state, r.out.message = InstanceStateFailed, "status: "+serr.Error()
	}
}

// prune deletes the members of resources no longer in the graph (see
// pruneInventory); the instance is IN_PROGRESS while they leave.
func (r *run) prune() {
	leaving, err := r.pruneInventory()
	switch {
	case err != nil:
		r.noteErr(err)
		if r.out.state != InstanceStateError {
			r.out.state, r.out.message = InstanceStateError, "pruning: "+err.Error()
		}
	case leaving && r.out.state == InstanceStateActive:
		r.out.pruning = true
		r.out.state, r.out.message = InstanceStateInProgress, "pruning children of resources no longer in the graph"
	}
}

// finish writes the status and returns what the queue does next.
func (r *run) finish() error {
	// Decided before the status is built: the author's conditions may
	// degrade the state shown, not the retry.
	retErr := r.resultError()
	if r.settlingOwnWrites() {
		// Only objects this pass created are not settled yet, and one of
		// them came back from the API server different from what was
		// applied: the next pass (now) compares again, and writes the
		// status then. Writing the in-between status would cost every new
		// instance a write and an event the user never needs.
		return requeue.Now(errors.New(r.out.message))
	}
	_, err := r.writeStatus()
	if err == nil {
		return retErr
	}
	r.noteErr(err)
	if apierrors.IsConflict(err) {
		return requeue.Now(fmt.Errorf("instance changed while writing status: %w", err))
	}
	if r.out.state != InstanceStateError {
		r.out.state, r.out.message = InstanceStateError, "writing status: "+err.Error()
	}
	return fmt.Errorf("writing status: %w", err)
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
		d := r.obs.details[id]
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
	if r.out.state != InstanceStateInProgress || r.out.managedErr != nil {
		return false
	}
	created := false
	for id, d := range r.obs.details {
		switch d.State {
		case ResourceStateCreated:
			created = true
		case ResourceStateUpdating:
			// Adopting kro's object is a write of kroscope's own, once: an
			// instance kro left ACTIVE stays so, with no IN_PROGRESS between.
			created = created || r.obs.adopted[id]
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
func (r *run) promoteSettledWrites() bool {
	var ids []string
	for id, d := range r.obs.details {
		switch d.State {
		case ResourceStateCreated, ResourceStateUpdating:
			if !r.obs.settled[id] {
				return false
			}
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		r.obs.details[id].State = ResourceStateSynced
	}
	return len(ids) > 0
}

// resultError maps the outcome to the typed error the queue reads.
func (r *run) resultError() error {
	switch r.out.state {
	case InstanceStateError:
		return errors.New(r.out.message)
	case InstanceStateFailed:
		// Retrying cannot help: only a spec change (a new generation) can.
		return requeue.None(errors.New(r.out.message))
	case InstanceStateInProgress:
		return requeue.After(r.c.cfg.DefaultRequeueDuration, errors.New(r.out.message))
	}
	return nil
}

// noteErr records 403s so the impersonation error metric counts them.
func (r *run) noteErr(err error) {
	if apierrors.IsForbidden(err) {
		r.out.forbidden.Store(true)
	}
}

// observation builds what the Observer receives, its messages redacted.
func (r *run) observation() Observation {
	details := r.redactedDetails()
	o := Observation{
		GVR:       r.c.gvr,
		Namespace: r.req.Namespace,
		Name:      r.req.Name,
		Gone:      r.out.gone,
		Deleting:  r.out.deleting,
		Message:   r.red.String(r.out.message),
		Resources: details,
	}
	if r.inst != nil {
		o.UID = r.inst.GetUID()
		o.Generation = r.inst.GetGeneration()
	}
	o.State = InstanceState{State: r.out.state, ResourceStates: map[string]*ResourceState{}}
	if r.out.state == InstanceStateError || r.out.state == InstanceStateFailed {
		o.State.ReconcileErr = errors.New(o.Message)
	}
	for id, d := range details {
		o.State.ResourceStates[id] = &ResourceState{State: d.State, Err: d.Err}
	}
	return o
}
