package reconciler

import (
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kroscope/kroscope/reconciler/client"
	desiredpkg "github.com/kroscope/kroscope/reconciler/desired"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
)

// steps take one resource of the graph as far as it can go in this pass:
// gated by what earlier layers found (observations), rendered, read and,
// unless observing, written (writer). A step returns what it found as a
// result and writes no detail: the layers record it (run.reconcileLayers).
type steps struct {
	obs   *observations
	w     *writer
	kinds kinds
	io    reach
}

// resource is the step for res. It reads the details and ready values of
// earlier layers, which hold schema and the ready resources.
func (s *steps) resource(res *graph.Resource) result {
	if v, why, held := s.obs.gate(res); held {
		if why != "" {
			return s.skip(res, why)
		}
		return result{verdict: v}
	}
	switch {
	case res.IsCollection():
		return s.collection(res, s.obs.ready())
	case res.ExternalCollection:
		return s.externalCollection(res, s.obs.ready())
	}
	return s.object(res, s.obs.ready())
}

// skip is the verdict for an excluded resource. A resource created earlier
// and now excluded is pruned, but only what the labels prove this instance
// owns.
func (s *steps) skip(res *graph.Resource, why string) result {
	out := result{verdict: verdict{state: ResourceStateSkipped, reason: why}}
	if res.External || s.io.observe {
		return out
	}
	leaving, err := s.w.pruneExcluded(res)
	switch {
	case err != nil:
		s.io.errs.note(err)
		out.state, out.err = ResourceStateError, fmt.Errorf("resource %s: deleting the excluded object: %w", res.ID, err)
	case len(leaving) > 0:
		// Still on its way out; the instance is not settled until it is gone.
		out.verdict = verdict{state: ResourceStateDeleting, reason: "excluded: deleting " + strings.Join(leaving, ", ")}
	}
	return out
}

// object renders one object, reads it and, unless observing, applies it
// (an external reference is only read).
func (s *steps) object(res *graph.Resource, vars graph.Vars) result {
	desired, err := res.Render(vars)
	if err != nil {
		return result{verdict: renderFailed(res, err)}
	}
	if err := s.w.place(res, desired); err != nil {
		return result{verdict: failed(err)}
	}
	out := result{name: desired.GetName(), namespace: desired.GetNamespace()}
	gvr, namespaced, err := s.kinds.resolve(res)
	if err != nil {
		s.io.errs.note(err)
		out.verdict = errored(err)
		return out
	}
	if !namespaced {
		desired.SetNamespace("")
		out.namespace = ""
	}
	if err := s.w.confine(res, namespaced, desired.GetNamespace()); err != nil {
		out.verdict = failed(err)
		return out
	}
	if res.External {
		return s.external(res, gvr, desired, out)
	}
	s.w.stamp(res, desired)
	out.desired = desired
	existing, err := s.w.liveChild(gvr, desired)
	for try := 0; ; try++ {
		if err != nil {
			s.io.errs.note(err)
			out.verdict = errored(fmt.Errorf("resource %s: reading %s: %w", res.ID, objectName(desired), err))
			return out
		}
		if existing != nil {
			out.observed = existing
			if msg := s.w.ownershipProblem(existing); msg != "" {
				out.verdict = errored(fmt.Errorf("resource %s: %s", res.ID, msg))
				return out
			}
			if existing.GetDeletionTimestamp() != nil {
				out.verdict = verdict{state: ResourceStateDeleting, reason: fmt.Sprintf("%s is being deleted; it will be recreated once gone", objectName(existing))}
				return out
			}
		}
		if s.io.observe {
			return observeOnly(res, desired, existing, out)
		}
		applied := s.w.applyObject(res, gvr, desired, existing, out)
		if !errors.Is(applied.err, client.ErrExists) || try > 0 {
			return applied
		}
		// The name is taken by an object the watches do not know: read
		// it, and judge it as a known one.
		existing, err = s.io.objs.Child(s.io.ctx, gvr, desired.GetNamespace(), desired.GetName())
	}
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

// external reads an externalRef; it is never written.
func (s *steps) external(res *graph.Resource, gvr schema.GroupVersionResource, desired *unstructured.Unstructured, out result) result {
	out.desired = desired
	obs, err := s.io.objs.Get(s.io.ctx, gvr, desired.GetNamespace(), desired.GetName())
	if apierrors.IsNotFound(err) {
		out.verdict = verdict{state: ResourceStateWaitingForExternalResource, reason: fmt.Sprintf("external %s does not exist yet", objectName(desired))}
		return out
	}
	if err != nil {
		s.io.errs.note(err)
		out.verdict = errored(fmt.Errorf("resource %s: reading external %s: %w", res.ID, objectName(desired), err))
		return out
	}
	return judge(res, out, obs, ResourceStateSynced)
}

// observeOnly computes the state of a managed resource without writing.
// Drift is judged on the rendered template only: the ownership marks
// kroscope would add may legitimately differ (kro writes its own).
func observeOnly(res *graph.Resource, desired, existing *unstructured.Unstructured, out result) result {
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

// renderFailed says why res could not be rendered: inputs not there yet
// mean PENDING (wait), anything else FAILED (only a spec or graph change
// can fix it).
func renderFailed(res *graph.Resource, err error) verdict {
	if graph.IsDataPending(err) {
		return pending(pendingText(err))
	}
	return failed(describeEvalErr(res.ID, err))
}

// pendingText explains a data-pending error in words.
func pendingText(err error) string {
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
