package reconciler

import (
	"errors"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kroscope/kroscope/reconciler/graph"
)

// verdict is what a step concluded about one resource: its state, and what
// holds it back (reason, shown as WaitingFor) or what went wrong (err).
// Whether the instance is requeued follows from the states of all its
// resources (see observations.instanceState and outcome.queueError), not
// from one of them.
type verdict struct {
	state  string
	reason string
	err    error
}

func pending(reason string) verdict { return verdict{state: ResourceStatePending, reason: reason} }
func failed(err error) verdict      { return verdict{state: failedState(err), err: err} }
func errored(err error) verdict     { return verdict{state: ResourceStateError, err: err} }

// failedState is the state of a resource whose step failed with err:
// FAILED (retrying cannot help until the instance or graph changes), except
// for an evaluation stopped by the CEL time limit. That limit is wall-clock:
// on a busy machine an expression well within it can still trip it, so the
// resource is ERROR and the instance is retried with backoff. The cost and
// size limits count the expression's own work and stay FAILED.
func failedState(err error) string {
	var lerr *graph.LimitError
	if errors.As(err, &lerr) && lerr.Limit == "time" {
		return ResourceStateError
	}
	return ResourceStateFailed
}

// result is everything reconciling one resource found this pass. The
// resource's step returns it; the layers record it (observations.record)
// once the resource's layer is done, so no step writes what another reads.
type result struct {
	verdict
	name, namespace   string
	desired, observed *unstructured.Unstructured
	readyChecks       []graph.Check
	// value is what status may read of the resource (nil: nothing
	// observed); ready says its dependents may read it too.
	value any
	ready bool
	// settled: this pass wrote the object and the API server returned one
	// that already holds the desired object (see promoteSettledWrites);
	// adopted: the write took the object over from kro (kroAdoption).
	settled, adopted bool
}

// judge gives out the observed object as its value and the verdict its
// readiness makes: readyState when ready, WAITING_FOR_READINESS otherwise,
// FAILED when readyWhen cannot be evaluated.
func judge(res *graph.Resource, out result, observed *unstructured.Unstructured, readyState string) result {
	out.observed, out.value = observed, observed.Object
	ready, reason, err := res.IsReady(observed.Object)
	if err != nil && !graph.IsDataPending(err) {
		out.verdict = failed(err) // it names the resource and its readyWhen
		return out
	}
	if !ready {
		// IsReady's reason already names the readyWhen expression.
		if reason == "" && err != nil {
			reason = "readyWhen: " + err.Error()
		}
		out.verdict = verdict{state: ResourceStateWaitingForReadiness, reason: reason}
		out.readyChecks = res.ExplainReady(observed.Object)
		return out
	}
	out.ready, out.verdict = true, verdict{state: readyState}
	return out
}
