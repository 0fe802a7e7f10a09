package reconciler

import (
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
)

// maxParallel bounds the resources of one layer reconciled at once.
const maxParallel = 8

// reconcileLayers walks the graph layer by layer. The resources of a layer
// do not depend on each other, so they proceed concurrently; a layer starts
// when the one before it is done, so every dependency already has its
// state (and, when ready, its observed object) for this pass.
func (r *run) reconcileLayers() {
	layers := r.c.rg.Layers
	if n := countIDs(layers); n != len(r.c.rg.TopologicalOrder) {
		// Layers that do not cover the graph would leave resources
		// untouched: fall back to one resource at a time.
		layers = nil
		for _, id := range r.c.rg.TopologicalOrder {
			layers = append(layers, []string{id})
		}
	}
	sem := make(chan struct{}, maxParallel)
	for _, layer := range layers {
		vars := maps.Clone(r.readyVars) // read-only for this layer
		var wg sync.WaitGroup
		for _, id := range layer {
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				r.reconcileResource(id, vars)
			})
		}
		wg.Wait()
	}
}

func countIDs(layers [][]string) int {
	n := 0
	for _, l := range layers {
		n += len(l)
	}
	return n
}

// reconcileResource takes one resource as far as it can go in this pass.
// vars holds schema and the ready resources of earlier layers.
func (r *run) reconcileResource(id string, vars graph.Vars) {
	res := r.c.rg.Resources[id]
	d := r.details[id]

	// Exclusion is contagious: a dependent of a skipped resource is skipped.
	for _, dep := range res.Dependencies {
		if dd := r.details[dep]; dd != nil && dd.State == ResourceStateSkipped {
			r.skip(res, d, fmt.Sprintf("depends on %s, which is skipped", dep))
			return
		}
	}

	// includeWhen reads schema and ready dependencies only; anything not yet
	// there means wait.
	if len(res.IncludeWhen) > 0 {
		included, err := res.IsIncluded(vars)
		switch {
		case err != nil && graph.IsDataPending(err):
			d.State, d.WaitingFor = ResourceStatePending, "includeWhen: "+r.pendingText(res, err)
			return
		case err != nil:
			d.State, d.Err = ResourceStateFailed, fmt.Errorf("resource %s: includeWhen: %w", id, err)
			return
		case !included:
			r.skip(res, d, "includeWhen is false")
			return
		}
	}

	// Every dependency must be observed and ready before this one renders.
	for _, dep := range res.Dependencies {
		if _, ok := vars[dep]; ok {
			continue
		}
		// Name the dependency and its state only: its own entry says why,
		// and nesting the reasons makes a chain's message grow with depth.
		why := strings.ToLower(strings.ReplaceAll(r.details[dep].State, "_", " "))
		d.State, d.WaitingFor = ResourceStatePending, fmt.Sprintf("waiting for %s (%s)", dep, why)
		return
	}

	if res.IsCollection() {
		r.reconcileCollection(res, d, vars)
		return
	}
	if res.ExternalCollection {
		r.reconcileExternalCollection(res, d, vars)
		return
	}

	desired, err := res.Render(vars)
	if err != nil {
		r.renderFailed(res, d, err)
		return
	}
	if err := r.placeObject(res, desired); err != nil {
		d.State, d.Err = ResourceStateFailed, err
		return
	}
	d.Name, d.Namespace = desired.GetName(), desired.GetNamespace()
	gvr, namespaced, err := r.resolveGVR(res)
	if err != nil {
		d.State, d.Err = ResourceStateError, err
		r.noteErr(err)
		return
	}
	if !namespaced {
		desired.SetNamespace("")
		d.Namespace = ""
	}
	if res.External {
		r.reconcileExternal(res, d, gvr, desired)
		return
	}
	r.stampChild(res, desired)
	d.Desired = desired

	existing, err := r.objs.Child(r.ctx, gvr, desired.GetNamespace(), desired.GetName())
	if err != nil {
		r.noteErr(err)
		d.State, d.Err = ResourceStateError, fmt.Errorf("resource %s: reading %s: %w", id, objectName(desired), err)
		return
	}
	if existing != nil {
		d.Observed = existing
		if msg := r.ownershipProblem(existing); msg != "" {
			d.State, d.Err = ResourceStateError, fmt.Errorf("resource %s: %s", id, msg)
			return
		}
		if existing.GetDeletionTimestamp() != nil {
			d.State, d.WaitingFor = ResourceStateDeleting, fmt.Sprintf("%s is being deleted; it will be recreated once gone", objectName(existing))
			return
		}
	}

	if r.opts.Observe {
		r.observeOnly(res, d, desired, existing)
		return
	}

	observed, created, updated, err := r.apply(res, gvr, desired, existing)
	if err != nil {
		r.noteErr(err)
		if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
			// The rendered object itself is wrong: retrying cannot help.
			d.State, d.Err = ResourceStateFailed, fmt.Errorf("resource %s: the API server rejected %s: %w", id, objectName(desired), err)
			return
		}
		d.State, d.Err = ResourceStateError, fmt.Errorf("resource %s: applying %s: %w", id, objectName(desired), err)
		return
	}
	if created || updated {
		if _, same := subsetOf(desired.Object, observed.Object, ""); same {
			// What the API server stored is what the next pass would
			// compare with: it would find the object SYNCED.
			r.noteSettledWrite(id)
		}
	}
	d.Observed = observed
	if created && r.reconciledBefore() {
		// A new object may replace one this node made under another name
		// (its name is templated): remove the old one, by label proof.
		// An instance never reconciled before has nothing to replace, and
		// skipping the cluster-wide LIST matters when hundreds are created
		// at once. (A child left by a reconcile that crashed before its
		// first status write is still found by deletion, which lists by
		// label.)
		if err := r.pruneReplaced(res, observed); err != nil {
			r.noteErr(err)
			d.State, d.Err = ResourceStateError, fmt.Errorf("resource %s: removing the object it replaced: %w", id, err)
			return
		}
	}
	r.markObserved(res, d, observed, func() string {
		switch {
		case created:
			return ResourceStateCreated
		case updated:
			return ResourceStateUpdating
		}
		return ResourceStateSynced
	}())
	if n := r.c.recreated.note(r.uid(), id, created, observed.GetUID(), r.now()); n > RecreateLimit {
		d.State, d.Err, d.WaitingFor = ResourceStateError, keepsDeleted(id, objectName(observed), n), ""
	}
}

// markObserved records the observed object, evaluates readiness, and sets
// the state: readyState when ready, WAITING_FOR_READINESS otherwise.
func (r *run) markObserved(res *graph.Resource, d *ResourceDetail, observed *unstructured.Unstructured, readyState string) {
	obj := observed.Object
	r.setVar(r.allVars, res.ID, obj)
	ready, reason, err := res.IsReady(obj)
	if err != nil && !graph.IsDataPending(err) {
		d.State, d.Err = ResourceStateFailed, fmt.Errorf("resource %s: readyWhen: %w", res.ID, err)
		return
	}
	if !ready {
		// IsReady's reason already names the readyWhen expression.
		if reason == "" && err != nil {
			reason = "readyWhen: " + err.Error()
		}
		d.State, d.WaitingFor = ResourceStateWaitingForReadiness, reason
		d.ReadyChecks = res.ExplainReady(obj)
		return
	}
	r.setVar(r.readyVars, res.ID, obj)
	d.State = readyState
	d.WaitingFor = ""
}

func (r *run) skip(res *graph.Resource, d *ResourceDetail, why string) {
	d.State, d.WaitingFor = ResourceStateSkipped, why
	if res.External || r.opts.Observe {
		return
	}
	// A resource created earlier and now excluded is pruned, but only what
	// the labels prove this instance owns.
	if err := r.pruneExcluded(res, d); err != nil {
		r.noteErr(err)
		d.State, d.Err = ResourceStateError, fmt.Errorf("resource %s: deleting the excluded object: %w", res.ID, err)
	}
}

// pruneExcluded deletes every object labelled as this instance's res.
func (r *run) pruneExcluded(res *graph.Resource, d *ResourceDetail) error {
	gvr, served, err := r.cachedGVR(res)
	if err != nil {
		return err
	}
	if !served {
		// A kind the API server does not serve has no objects to prune;
		// asking again (resetting the mapper) on every pass would only
		// load the API server with discovery requests.
		return nil
	}
	deleted, terminating, err := r.pruneNode(gvr, res.ID, func(*unstructured.Unstructured) bool { return false })
	if err != nil {
		return err
	}
	if leaving := append(deleted, terminating...); len(leaving) > 0 {
		// Still on its way out; the instance is not settled until it is gone.
		d.State = ResourceStateDeleting
		d.WaitingFor = "excluded: deleting " + strings.Join(leaving, ", ")
	}
	return nil
}

// pruneNode deletes this instance's objects of node nodeID (found by their
// labels, deleted only when the labels prove the instance owns them) that
// keep does not keep. It returns the objects it deleted and those already
// on their way out, which it leaves alone.
func (r *run) pruneNode(gvr schema.GroupVersionResource, nodeID string, keep func(*unstructured.Unstructured) bool) (deleted, terminating []string, err error) {
	objs, err := r.listChildren(gvr, nodeID)
	if err != nil {
		return nil, nil, err
	}
	for i := range objs {
		o := &objs[i]
		if keep(o) || !r.provenOwned(o) {
			continue
		}
		if o.GetDeletionTimestamp() != nil {
			terminating = append(terminating, objectName(o))
			continue
		}
		if err := r.deleteObject(gvr, o); err != nil {
			return deleted, terminating, err
		}
		deleted = append(deleted, objectName(o))
	}
	return deleted, terminating, nil
}

// reconciledBefore reports whether a status was ever written for the
// instance (by kroscope or kro).
func (r *run) reconciledBefore() bool {
	st, _ := r.inst.Object["status"].(map[string]any)
	s, _ := st["state"].(string)
	return s != ""
}

// pruneReplaced deletes the objects labelled as this instance's res other
// than current.
func (r *run) pruneReplaced(res *graph.Resource, current *unstructured.Unstructured) error {
	gvr, _, err := r.resolveGVR(res)
	if err != nil {
		return err
	}
	deleted, _, err := r.pruneNode(gvr, res.ID, func(o *unstructured.Unstructured) bool { return o.GetUID() == current.GetUID() })
	for _, name := range deleted {
		r.event("Normal", "Pruned", fmt.Sprintf("resource %s: deleted %s, replaced by %s", res.ID, name, objectName(current)))
	}
	return err
}

// reconcileExternal reads an externalRef; it is never written.
func (r *run) reconcileExternal(res *graph.Resource, d *ResourceDetail, gvr schema.GroupVersionResource, desired *unstructured.Unstructured) {
	d.Desired = desired
	obs, err := r.objs.Get(r.ctx, gvr, desired.GetNamespace(), desired.GetName())
	if apierrors.IsNotFound(err) {
		d.State, d.WaitingFor = ResourceStateWaitingForExternalResource, fmt.Sprintf("external %s does not exist yet", objectName(desired))
		return
	}
	if err != nil {
		r.noteErr(err)
		d.State, d.Err = ResourceStateError, fmt.Errorf("resource %s: reading external %s: %w", res.ID, objectName(desired), err)
		return
	}
	d.Observed = obs
	r.markObserved(res, d, obs, ResourceStateSynced)
}

// observeOnly computes the state of a managed resource without writing.
// Drift is judged on the rendered template only: the ownership marks
// kroscope would add may legitimately differ (kro writes its own).
func (r *run) observeOnly(res *graph.Resource, d *ResourceDetail, desired, existing *unstructured.Unstructured) {
	if existing == nil {
		d.State, d.WaitingFor = ResourceStatePending, fmt.Sprintf("%s does not exist (observing: kroscope does not create it)", objectName(desired))
		return
	}
	path, same := drift(desired, existing)
	if same {
		r.markObserved(res, d, existing, ResourceStateSynced)
		return
	}
	r.markObserved(res, d, existing, ResourceStateInProgress)
	if d.State == ResourceStateInProgress {
		d.WaitingFor = fmt.Sprintf("differs from the desired object at %s (observing: not corrected)", path)
	}
}

// drift compares the rendered template with the live object, leaving out
// the ownership marks kroscope would add: the first differing path, or
// same.
func drift(desired, existing *unstructured.Unstructured) (path string, same bool) {
	cmp := desired.DeepCopy()
	cmp.SetOwnerReferences(nil)
	labels := cmp.GetLabels()
	for k := range labels {
		if metadata.IsChildLabel(k) || k == metadata.ManagedByLabel {
			delete(labels, k)
		}
	}
	cmp.SetLabels(labels)
	ann := cmp.GetAnnotations()
	delete(ann, metadata.ApplyOrderAnnotation)
	cmp.SetAnnotations(ann)
	return subsetOf(cmp.Object, existing.Object, "")
}

// placeObject defaults the namespace of a namespaced child to the
// instance's.
func (r *run) placeObject(res *graph.Resource, desired *unstructured.Unstructured) error {
	if desired.GetName() == "" {
		return fmt.Errorf("resource %s: rendered %s has no metadata.name", res.ID, res.GVK.Kind)
	}
	if res.Namespaced && desired.GetNamespace() == "" {
		if r.inst.GetNamespace() == "" {
			return fmt.Errorf("resource %s: %s is namespaced but sets no metadata.namespace, and the instance is cluster-scoped", res.ID, res.GVK.Kind)
		}
		desired.SetNamespace(r.inst.GetNamespace())
	}
	return nil
}

// resolveGVR maps the resource's kind through the REST mapper when there is
// one (it knows the real plural and scope), else uses the graph's guess.
func (r *run) resolveGVR(res *graph.Resource) (schema.GroupVersionResource, bool, error) {
	m := r.c.clientSet.RESTMapper()
	if m == nil {
		return res.GVR, res.Namespaced, nil
	}
	mapping, err := m.RESTMapping(res.GVK.GroupKind(), res.GVK.Version)
	if meta.IsNoMatchError(err) {
		// A kind installed after the mapper cached discovery: look again once.
		m.Reset()
		mapping, err = m.RESTMapping(res.GVK.GroupKind(), res.GVK.Version)
	}
	if err != nil {
		if meta.IsNoMatchError(err) {
			return schema.GroupVersionResource{}, false, fmt.Errorf("resource %s: kind %s is not served by the API server", res.ID, res.GVK)
		}
		return res.GVR, res.Namespaced, nil
	}
	return mapping.Resource, mapping.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

// cachedGVR maps an excluded resource's kind with what the REST mapper
// already knows, without refreshing discovery; served is false when the
// kind is not served.
func (r *run) cachedGVR(res *graph.Resource) (gvr schema.GroupVersionResource, served bool, err error) {
	m := r.c.clientSet.RESTMapper()
	if m == nil {
		return res.GVR, true, nil
	}
	mapping, err := m.RESTMapping(res.GVK.GroupKind(), res.GVK.Version)
	if meta.IsNoMatchError(err) {
		return schema.GroupVersionResource{}, false, nil
	}
	if err != nil {
		return res.GVR, true, nil
	}
	return mapping.Resource, true, nil
}

// stampChild adds kro's and kroscope's labels, the ApplySet part-of label,
// the apply-order annotation and, when the API server allows it, an owner
// reference to the instance: a namespaced instance can own children in its
// own namespace only, a cluster-scoped one any child.
func (r *run) stampChild(res *graph.Resource, desired *unstructured.Unstructured) {
	// What a graph writes into a Secret is as secret as what it reads.
	r.red.AddSecret(desired.Object)
	// Only the child labels: the instance labeler's set (its graph's name)
	// belongs on instances. A child that is itself an instance of another
	// graph gets that graph's labels from its own controller, and both
	// applying different values would conflict.
	labels := metadata.ChildLabels(r.instanceRef(), res.ID)
	labels[metadata.ApplySetPartOfLabel] = r.applySetID()
	setMetadataStrings(desired, "labels", labels)
	setMetadataStrings(desired, "annotations", map[string]string{metadata.ApplyOrderAnnotation: strconv.Itoa(r.c.applyOrders[res.ID])})

	if r.inst.GetNamespace() == "" || desired.GetNamespace() == r.inst.GetNamespace() {
		// The unstructured form of metav1.OwnerReference{..., Controller:
		// true}, built directly: SetOwnerReferences converts by reflection.
		_ = unstructured.SetNestedSlice(desired.Object, []any{map[string]any{
			"apiVersion": r.inst.GetAPIVersion(),
			"kind":       r.inst.GetKind(),
			"name":       r.inst.GetName(),
			"uid":        string(r.inst.GetUID()),
			"controller": true,
		}}, "metadata", "ownerReferences")
	}
}

// setMetadataStrings sets kv in obj's metadata.labels or
// metadata.annotations (field) as GetLabels, maps.Copy and SetLabels would
// (or their annotation twins): into the object's own map when it holds
// only strings, as a rendered template's does, instead of converting it to
// a map[string]string and back on every pass; anything else (a value that
// is not a string) goes the converting way, which drops such a map.
func setMetadataStrings(obj *unstructured.Unstructured, field string, kv map[string]string) {
	if md, ok := obj.Object["metadata"].(map[string]any); ok {
		cur, isMap := md[field].(map[string]any)
		if md[field] == nil {
			cur, isMap = map[string]any{}, true
		}
		if isMap && allStrings(cur) {
			for k, v := range kv {
				cur[k] = v
			}
			md[field] = cur
			return
		}
	}
	get, set := obj.GetLabels, obj.SetLabels
	if field == "annotations" {
		get, set = obj.GetAnnotations, obj.SetAnnotations
	}
	m := get()
	if m == nil {
		m = map[string]string{}
	}
	maps.Copy(m, kv)
	set(m)
}

func allStrings(m map[string]any) bool {
	for _, v := range m {
		if _, ok := v.(string); !ok {
			return false
		}
	}
	return true
}

// renderFailed records why res could not be rendered: inputs not there
// yet mean PENDING (wait), anything else FAILED (only a spec or graph
// change can fix it).
func (r *run) renderFailed(res *graph.Resource, d *ResourceDetail, err error) {
	if graph.IsDataPending(err) {
		d.State, d.WaitingFor = ResourceStatePending, r.pendingText(res, err)
		return
	}
	d.State, d.Err = ResourceStateFailed, describeEvalErr(res.ID, err)
}

// pendingText explains a data-pending error in words.
func (r *run) pendingText(res *graph.Resource, err error) string {
	var ee *graph.EvalError
	if errors.As(err, &ee) {
		return fmt.Sprintf("waiting for data at %s: %v (in %s)", ee.Path, ee.Err, graph.ExpressionRef(ee.Expression))
	}
	return "waiting for data: " + err.Error()
}

// describeEvalErr makes sure the message names resource and expression.
func describeEvalErr(id string, err error) error {
	var ee *graph.EvalError
	if errors.As(err, &ee) {
		return err // EvalError already names resource, path and expression
	}
	return fmt.Errorf("resource %s: %w", id, err)
}

// objectName renders "Kind ns/name".
func objectName(u *unstructured.Unstructured) string {
	n := u.GetName()
	if ns := u.GetNamespace(); ns != "" {
		n = ns + "/" + n
	}
	return u.GetKind() + " " + n
}
