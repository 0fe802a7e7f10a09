package reconciler

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/confine"
	desiredpkg "github.com/kroscope/kroscope/reconciler/desired"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
)

// reconcileLayers walks the graph layer by layer. The resources of a layer
// do not depend on each other, so they proceed concurrently, each
// returning what it found; a layer's results are recorded when the layer is
// done, so every dependency already has its state (and, when ready, its
// observed object) for this pass, and nothing is written while a layer
// reads.
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
	for _, layer := range layers {
		results := make([]result, len(layer))
		eachAtOnce(len(layer), func(i int) {
			results[i] = r.reconcileResource(r.c.rg.Resources[layer[i]])
		})
		for i, id := range layer {
			r.record(id, results[i])
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

// reconcileResource takes one resource as far as it can go in this pass.
// It reads the details and readyVars of earlier layers, which hold schema
// and the ready resources.
func (r *run) reconcileResource(res *graph.Resource) result {
	if out, held := r.admit(res); held {
		return out
	}
	switch {
	case res.IsCollection():
		return r.reconcileCollection(res, r.obs.readyVars)
	case res.ExternalCollection:
		return r.reconcileExternalCollection(res, r.obs.readyVars)
	}
	return r.reconcileObject(res, r.obs.readyVars)
}

// admit decides whether res may render this pass: a skipped dependency or
// a false includeWhen skip it; includeWhen's data or a dependency not yet
// ready holds it back. held is true with the verdict when it may not.
func (r *run) admit(res *graph.Resource) (out result, held bool) {
	// Exclusion is contagious: a dependent of a skipped resource is skipped.
	for _, dep := range res.Dependencies {
		if dd := r.obs.details[dep]; dd != nil && dd.State == ResourceStateSkipped {
			return r.skip(res, fmt.Sprintf("depends on %s, which is skipped", dep)), true
		}
	}
	vars := r.obs.readyVars
	// includeWhen reads schema and ready dependencies only; anything not yet
	// there means wait.
	if len(res.IncludeWhen) > 0 {
		included, err := res.IsIncluded(vars)
		switch {
		case err != nil && graph.IsDataPending(err):
			return result{verdict: pending("includeWhen: " + r.pendingText(res, err))}, true
		case err != nil:
			return result{verdict: failed(fmt.Errorf("resource %s: includeWhen: %w", res.ID, err))}, true
		case !included:
			return r.skip(res, "includeWhen is false"), true
		}
	}
	// Every dependency must be observed and ready before this one renders.
	for _, dep := range res.Dependencies {
		if _, ok := vars[dep]; ok {
			continue
		}
		// Name the dependency and its state only: its own entry says why,
		// and nesting the reasons makes a chain's message grow with depth.
		why := strings.ToLower(strings.ReplaceAll(r.obs.details[dep].State, "_", " "))
		return result{verdict: pending(fmt.Sprintf("waiting for %s (%s)", dep, why))}, true
	}
	return result{}, false
}

// reconcileObject renders one object, reads it and, unless observing,
// applies it (an external reference is only read).
func (r *run) reconcileObject(res *graph.Resource, vars graph.Vars) result {
	desired, err := res.Render(vars)
	if err != nil {
		return result{verdict: r.renderFailed(res, err)}
	}
	if err := r.placeObject(res, desired); err != nil {
		return result{verdict: failed(err)}
	}
	out := result{name: desired.GetName(), namespace: desired.GetNamespace()}
	gvr, namespaced, err := r.resolveGVR(res)
	if err != nil {
		r.noteErr(err)
		out.verdict = errored(err)
		return out
	}
	if !namespaced {
		desired.SetNamespace("")
		out.namespace = ""
	}
	if err := r.confine(res, namespaced, desired.GetNamespace()); err != nil {
		out.verdict = failed(err)
		return out
	}
	if res.External {
		return r.reconcileExternal(res, gvr, desired, out)
	}
	r.stampChild(res, desired)
	out.desired = desired
	existing, err := r.liveChild(gvr, desired)
	for try := 0; ; try++ {
		if err != nil {
			r.noteErr(err)
			out.verdict = errored(fmt.Errorf("resource %s: reading %s: %w", res.ID, objectName(desired), err))
			return out
		}
		if existing != nil {
			out.observed = existing
			if msg := r.ownershipProblem(existing); msg != "" {
				out.verdict = errored(fmt.Errorf("resource %s: %s", res.ID, msg))
				return out
			}
			if existing.GetDeletionTimestamp() != nil {
				out.verdict = verdict{state: ResourceStateDeleting, reason: fmt.Sprintf("%s is being deleted; it will be recreated once gone", objectName(existing))}
				return out
			}
		}
		if r.observing() {
			return r.observeOnly(res, desired, existing, out)
		}
		applied := r.applyObject(res, gvr, desired, existing, out)
		if !errors.Is(applied.err, client.ErrExists) || try > 0 {
			return applied
		}
		// The name is taken by an object the watches do not know: read
		// it, and judge it as a known one.
		existing, err = r.objs.Child(r.ctx, gvr, desired.GetNamespace(), desired.GetName())
	}
}

// liveChild is what stands at desired's name, as far as this pass must
// know before writing: the watches' copy when they know it, and nil when
// they do not: the apply that creates the child proves the name free, and
// fails with client.ErrExists when it is not (client.Objects.Create).
// Observing (nothing will be written) or without watches to ask, it is
// the API server's.
func (r *run) liveChild(gvr schema.GroupVersionResource, desired *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if !r.observing() {
		if u, ok := r.objs.KnownChild(gvr, desired.GetNamespace(), desired.GetName()); ok {
			return u, nil
		}
	}
	return r.objs.Child(r.ctx, gvr, desired.GetNamespace(), desired.GetName())
}

// applyObject applies desired over existing (nil: it does not exist) and
// judges what the API server returned.
func (r *run) applyObject(res *graph.Resource, gvr schema.GroupVersionResource, desired, existing *unstructured.Unstructured, out result) result {
	adopting := existing != nil && len(kroAdoption(existing, r.uid())) > 0
	observed, created, updated, err := r.apply(res, gvr, desired, existing)
	if err != nil {
		r.noteErr(err)
		if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
			// The rendered object itself is wrong: retrying cannot help.
			out.verdict = failed(fmt.Errorf("resource %s: the API server rejected %s: %w", res.ID, objectName(desired), err))
			return out
		}
		out.verdict = errored(fmt.Errorf("resource %s: applying %s: %w", res.ID, objectName(desired), err))
		return out
	}
	if created || updated {
		// What the API server stored is what the next pass would compare
		// with: when it holds the desired object, that pass finds it SYNCED.
		_, out.settled = desiredpkg.Subset(desired.Object, observed.Object, "")
		out.adopted = updated && adopting
	}
	out.observed = observed
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
			out.verdict = errored(fmt.Errorf("resource %s: removing the object it replaced: %w", res.ID, err))
			return out
		}
	}
	out = judge(res, out, observed, writtenState(created, updated))
	if n := r.c.recreated.note(r.uid(), res.ID, created, observed.GetUID(), r.opts.Now()); n > RecreateLimit {
		out.verdict = errored(keepsDeleted(res.ID, objectName(observed), n))
	}
	return out
}

// writtenState is the state of a ready object this pass created, updated
// or found as desired.
func writtenState(created, updated bool) string {
	switch {
	case created:
		return ResourceStateCreated
	case updated:
		return ResourceStateUpdating
	}
	return ResourceStateSynced
}

// skip is the verdict for an excluded resource. A resource created earlier
// and now excluded is pruned, but only what the labels prove this instance
// owns.
func (r *run) skip(res *graph.Resource, why string) result {
	out := result{verdict: verdict{state: ResourceStateSkipped, reason: why}}
	if res.External || r.observing() {
		return out
	}
	leaving, err := r.pruneExcluded(res)
	switch {
	case err != nil:
		r.noteErr(err)
		out.state, out.err = ResourceStateError, fmt.Errorf("resource %s: deleting the excluded object: %w", res.ID, err)
	case len(leaving) > 0:
		// Still on its way out; the instance is not settled until it is gone.
		out.verdict = verdict{state: ResourceStateDeleting, reason: "excluded: deleting " + strings.Join(leaving, ", ")}
	}
	return out
}

// pruneExcluded deletes every object labelled as this instance's res, and
// names those still on their way out.
func (r *run) pruneExcluded(res *graph.Resource) ([]string, error) {
	gvr, served, err := r.cachedGVR(res)
	if err != nil {
		return nil, err
	}
	if !served {
		// A kind the API server does not serve has no objects to prune;
		// asking again (resetting the mapper) on every pass would only
		// load the API server with discovery requests.
		return nil, nil
	}
	deleted, terminating, err := r.pruneNode(gvr, res.ID, func(*unstructured.Unstructured) bool { return false })
	if err != nil {
		return nil, err
	}
	return append(deleted, terminating...), nil
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
func (r *run) reconcileExternal(res *graph.Resource, gvr schema.GroupVersionResource, desired *unstructured.Unstructured, out result) result {
	out.desired = desired
	obs, err := r.objs.Get(r.ctx, gvr, desired.GetNamespace(), desired.GetName())
	if apierrors.IsNotFound(err) {
		out.verdict = verdict{state: ResourceStateWaitingForExternalResource, reason: fmt.Sprintf("external %s does not exist yet", objectName(desired))}
		return out
	}
	if err != nil {
		r.noteErr(err)
		out.verdict = errored(fmt.Errorf("resource %s: reading external %s: %w", res.ID, objectName(desired), err))
		return out
	}
	return judge(res, out, obs, ResourceStateSynced)
}

// observeOnly computes the state of a managed resource without writing.
// Drift is judged on the rendered template only: the ownership marks
// kroscope would add may legitimately differ (kro writes its own).
func (r *run) observeOnly(res *graph.Resource, desired, existing *unstructured.Unstructured, out result) result {
	if existing == nil {
		out.verdict = pending(fmt.Sprintf("%s does not exist (observing: kroscope does not create it)", objectName(desired)))
		return out
	}
	path, same := drift(desired, existing)
	if same {
		return judge(res, out, existing, ResourceStateSynced)
	}
	out = judge(res, out, existing, ResourceStateInProgress)
	if out.state == ResourceStateInProgress {
		out.reason = fmt.Sprintf("differs from the desired object at %s (observing: not corrected)", path)
	}
	return out
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
	return desiredpkg.Subset(cmp.Object, existing.Object, "")
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

// confine asks confine.Decide whether res's object may be written (or,
// external, read) in namespace ns; namespaced is the kind's scope as the
// API server serves it.
func (r *run) confine(res *graph.Resource, namespaced bool, ns string) error {
	v := confine.Decide(confine.Facts{
		Kind: res.GVK.GroupKind(), External: res.External || res.ExternalCollection, Namespaced: namespaced,
		InstanceNamespaced: r.inst.GetNamespace() != "", InstanceNamespace: r.inst.GetNamespace(),
		Rendered: true, Namespace: ns, LiteralNamespace: !NamespaceComputed(res), Grant: r.opts.Grant,
	})
	if !v.Allowed {
		return fmt.Errorf("resource %s: %s", res.ID, v.Why)
	}
	return nil
}

// NamespaceComputed reports whether res's metadata.namespace comes from an
// expression (the field itself, or a map or object holding it, is
// templated) rather than being written in the graph, or left out.
func NamespaceComputed(res *graph.Resource) bool {
	want := []any{"metadata", "namespace"}
	for _, f := range res.Fields {
		if len(f.Segments) <= len(want) && slices.Equal(f.Segments, want[:len(f.Segments)]) {
			return true
		}
	}
	return false
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

// renderFailed says why res could not be rendered: inputs not there yet
// mean PENDING (wait), anything else FAILED (only a spec or graph change
// can fix it).
func (r *run) renderFailed(res *graph.Resource, err error) verdict {
	if graph.IsDataPending(err) {
		return pending(r.pendingText(res, err))
	}
	return failed(describeEvalErr(res.ID, err))
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
