package reconciler

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
	"github.com/kroscope/kroscope/reconciler/redact"
	"github.com/kroscope/kroscope/reconciler/requeue"
)

// run is the fresh runtime of one Reconcile: built at its start, dropped at
// its end. Nothing in it survives to the next reconcile. It holds what
// lives for the whole reconcile and wires its parts together: what the
// resources' steps found (obs), what the reconcile concludes (out), and,
// once the instance is read, the parts that act for it (p).
type run struct {
	// c is asked for the identity, the instance and the parts: its
	// methods only.
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
	red *redact.Set
	g   *graph.Graph
	cfg ReconcileConfig

	obs observations
	out outcome
	p   *parts
}

// parts are what acts for the instance in one run, wired by
// Controller.newParts once the identity is chosen and the instance read:
// each is given, at construction, the few others it asks.
type parts struct {
	io     reach
	inst   instance
	kinds  kinds
	ev     events
	aset   applySet
	marks  marks
	w      writer
	steps  steps
	status statusWriter
	del    deletion
}

func (r *run) reconcile() error {
	// The identity is chosen from the namespace alone, so even reading the
	// instance goes through it: everything for the instance uses one client.
	cs, sa, err := r.c.executionClient(r.req.Namespace)
	if err != nil {
		r.out.set(InstanceStateError, err.Error())
		return err
	}
	objs := newObjects(cs, sa, r.opts)
	defer func() {
		if r.out.wasForbidden() && sa != "" {
			impersonationErrors.WithLabelValues(r.req.Namespace, sa, errTypePermissions).Inc()
		}
	}()

	inst, err := r.c.getInstance(r.ctx, objs, r.req.Namespace, r.req.Name)
	if err != nil {
		r.noteErr(err)
		r.out.set(InstanceStateError, err.Error())
		return err
	}
	if inst == nil {
		r.out.vanished("instance not found")
		return nil
	}
	io := reach{ctx: r.ctx, objs: objs, errs: &r.out, observe: r.observing()}
	r.p = r.c.newParts(io, sa, inst, &r.obs, r.opts, r.red, r.log)

	if inst.GetDeletionTimestamp() != nil {
		r.out.startDeleting()
		return r.deletion()
	}
	return r.reconcileInstance()
}

// reconcileInstance is the create/update path: the instance steps that
// may end it early, then the layers, the instance's conclusion and its
// status.
func (r *run) reconcileInstance() error {
	if s := r.markManaged(); s != nil {
		return r.halt(s)
	}
	if metadata.Suspended(r.p.inst.get().GetAnnotations()) {
		return r.suspend()
	}
	if s := r.precheck(); s != nil {
		return r.halt(s)
	}
	r.obs.seed(schemaVar(r.p.inst.get()))
	r.reconcileLayers()
	if u := r.p.aset.latest(); u != nil {
		r.p.inst.set(u)
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
	r.out.set(s.state, s.message)
	if s.writeStatus {
		r.writeStatusBestEffort()
	}
	return s.err
}

// markManaged puts the finalizer, labels and inventory on the instance
// (see marks.ensure); nil when it may go on.
func (r *run) markManaged() *stop {
	if r.observing() {
		return nil
	}
	err := r.p.marks.ensure()
	switch {
	case err == nil:
		return nil
	case apierrors.IsConflict(err):
		// Someone changed the instance meanwhile: read it again.
		return &stop{state: InstanceStateInProgress, message: "instance changed while marking it managed; retrying", err: requeue.Now(err)}
	}
	r.noteErr(err)
	r.out.unmanaged(err)
	return &stop{state: InstanceStateError, message: "marking the instance as managed: " + err.Error(), writeStatus: true, err: err}
}

// precheck refuses an instance nested too deep or without the spec its
// graph needs, and reads its ApplySet inventory; nil when it may go on.
func (r *run) precheck() *stop {
	msg, err := nestingTooDeep(r.p.io, r.p.kinds, r.cfg.MaxNestingDepth, r.p.inst.get())
	switch {
	case err != nil:
		r.noteErr(err)
		return &stop{state: InstanceStateError, message: "checking the nesting depth: " + err.Error(), writeStatus: true, err: err}
	case msg != "":
		// Reconciling would create the next level down: refuse.
		return &stop{state: InstanceStateFailed, message: msg, writeStatus: true, err: requeue.None(errors.New(msg))}
	}
	if msg := missingSpec(r.g, r.p.inst.get()); msg != "" {
		// Nothing an expression reads from spec will ever arrive: say so
		// instead of waiting, and touch no child (a spec deleted later
		// prunes nothing). Editing the instance wakes it.
		return &stop{state: InstanceStateFailed, message: msg, writeStatus: true, err: requeue.None(errors.New(msg))}
	}
	if r.observing() {
		return nil
	}
	inv, err := r.p.aset.graphInventory()
	if err != nil {
		// A hand-broken inventory: applying children it does not record
		// would hide them from deletion. Someone must repair it.
		return &stop{state: InstanceStateError, message: err.Error(), writeStatus: true, err: err}
	}
	r.p.aset.use(inv)
	return nil
}

// reconcileLayers walks the graph layer by layer. The resources of a layer
// do not depend on each other, so they proceed concurrently, each
// returning what it found; a layer's results are recorded when the layer is
// done, so every dependency already has its state (and, when ready, its
// observed object) for this pass, and nothing is written while a layer
// reads.
func (r *run) reconcileLayers() {
	layers := r.g.Layers
	if n := countIDs(layers); n != len(r.g.TopologicalOrder) {
		// Layers that do not cover the graph would leave resources
		// untouched: fall back to one resource at a time.
		layers = nil
		for _, id := range r.g.TopologicalOrder {
			layers = append(layers, []string{id})
		}
	}
	for _, layer := range layers {
		results := make([]result, len(layer))
		eachAtOnce(len(layer), func(i int) {
			results[i] = r.p.steps.resource(r.g.Resources[layer[i]])
		})
		for i, id := range layer {
			r.obs.record(id, results[i])
		}
	}
}

func countIDs(layers [][]string) int {
	n := 0
	for _, l := range layers {
		n += len(l)
	}
	return n
}

// conclude derives the instance's state from its resources, promotes the
// writes that settled, prunes the inventory once the instance is settled,
// and projects the status fields.
func (r *run) conclude() {
	r.out.set(r.obs.instanceState())
	if r.settlingOwnWrites() && r.obs.promoteSettledWrites() {
		r.out.set(r.obs.instanceState())
	}
	if !r.observing() && r.obs.settledForPrune() && r.p.aset.needsPrune() {
		r.prune()
	}
	projected, serr := r.g.RenderStatus(r.obs.all())
	r.out.project(projected)
	if serr != nil {
		// A status expression that fails (not merely pending) cannot fix
		// itself: same treatment as a template's CEL error.
		r.out.degrade(InstanceStateFailed, "status: "+serr.Error())
	}
}

// prune deletes the members of resources no longer in the graph (see
// applySet.prune); the instance is IN_PROGRESS while they leave.
func (r *run) prune() {
	leaving, err := r.p.aset.prune()
	switch {
	case err != nil:
		r.noteErr(err)
		r.out.degrade(InstanceStateError, "pruning: "+err.Error())
	case leaving:
		r.out.prunes()
	}
}

// settlingOwnWrites reports whether the instance waits only for objects
// this pass created (or changed while creating others): see
// observations.onlyOwnWrites.
func (r *run) settlingOwnWrites() bool {
	return r.out.waitsOnOwnWrites() && r.obs.onlyOwnWrites()
}

// finish writes the status and returns what the queue does next.
func (r *run) finish() error {
	// Decided before the status is built: the author's conditions may
	// degrade the state shown, not the retry.
	retErr := r.out.queueError(r.cfg.DefaultRequeueDuration)
	if r.settlingOwnWrites() {
		// Only objects this pass created are not settled yet, and one of
		// them came back from the API server different from what was
		// applied: the next pass (now) compares again, and writes the
		// status then. Writing the in-between status would cost every new
		// instance a write and an event the user never needs.
		return requeue.Now(errors.New(r.out.message()))
	}
	_, err := r.p.status.write(&r.out)
	if err == nil {
		return retErr
	}
	r.noteErr(err)
	if apierrors.IsConflict(err) {
		return requeue.Now(fmt.Errorf("instance changed while writing status: %w", err))
	}
	r.out.degrade(InstanceStateError, "writing status: "+err.Error())
	return fmt.Errorf("writing status: %w", err)
}

// deletion runs a deletion pass (see deletion.pass) and writes the status
// it asks for.
func (r *run) deletion() error {
	end := r.p.del.pass()
	r.out.set(InstanceStateDeleting, end.message)
	r.out.block(end.blocked)
	if end.gone {
		r.out.vanished(end.message)
	}
	switch end.status {
	case statusBestEffort:
		r.writeStatusBestEffort()
	case statusRequired:
		if _, err := r.p.status.write(&r.out); err != nil && !apierrors.IsNotFound(err) {
			r.noteErr(err)
			return fmt.Errorf("writing status: %w", err)
		}
	}
	return end.err
}

// writeStatusBestEffort writes the status on a path that returns another
// error (or a deliberate no-requeue): a failed write is only logged, since
// the next pass writes it again.
func (r *run) writeStatusBestEffort() {
	if _, err := r.p.status.write(&r.out); err != nil {
		r.log.V(1).Info("status write failed", "error", err.Error())
	}
}

// missingSpec is the message for an instance that has no spec while the
// graph requires fields in it, "" otherwise. The API server admits such an
// instance (the root of kro's instance CRD, and so of kroscope's, requires
// nothing), and an expression reading spec would wait for ever.
func missingSpec(g *graph.Graph, inst *unstructured.Unstructured) string {
	if _, has := inst.Object["spec"]; has {
		return ""
	}
	req := g.Instance.RequiredSpecFields()
	if len(req) == 0 {
		return ""
	}
	fields := make([]string, len(req))
	for i, f := range req {
		fields[i] = "spec." + f
	}
	return fmt.Sprintf("the instance has no spec, and %s requires %s: add a spec that sets them", g.Instance.GVK.Kind, strings.Join(fields, ", "))
}

// noteErr records 403s so the impersonation error metric counts them.
func (r *run) noteErr(err error) { r.out.note(err) }

// observation builds what the Observer receives, its messages redacted;
// the caller adds the graph's resource and the timing.
func (r *run) observation() Observation {
	o := Observation{
		Namespace: r.req.Namespace,
		Name:      r.req.Name,
		Resources: r.obs.redacted(),
	}
	if r.p != nil {
		o.UID = r.p.inst.get().GetUID()
		o.Generation = r.p.inst.get().GetGeneration()
	}
	r.out.fill(&o, r.red)
	for id, d := range o.Resources {
		o.State.ResourceStates[id] = &ResourceState{State: d.State, Err: d.Err}
	}
	return o
}
