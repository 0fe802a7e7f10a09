package state

import "fmt"

// Rollout is how far a graph's definition has reached its instances since
// it was served: Updated were reconciled with it and are not failing,
// Failed were reconciled with it and fail, Total is every instance taking
// part (Rolled).
type Rollout struct {
	Updated, Failed, Total int
	// Serving is the graph's Serving: above 1 once the definition changed.
	Serving int64
}

// Running reports whether a change of definition is still reaching the
// instances; the first definition served at start is not a rollout.
func (r Rollout) Running() bool {
	return r.Serving > 1 && r.Updated < r.Total
}

// Line is the progress as the instance list shows it: "updated 37/120"
// with ", 3 failed" when some did.
func (r Rollout) Line() string {
	s := fmt.Sprintf("updated %d/%d", r.Updated, r.Total)
	if r.Failed > 0 {
		s += fmt.Sprintf(", %d failed", r.Failed)
	}
	return s
}

// Rolled decides whether an instance takes part in the rollout of the
// definition numbered serving, and whether it was updated (its last
// reconcile ran with that definition and does not fail) or failed with
// it. An instance being deleted or suspended takes no part: no reconcile
// applies the definition to it.
func Rolled(in *Instance, serving int64) (counted, updated, failed bool) {
	if in.Deleting || in.Phase().Class() == ClassSuspended || in.Phase().Class() == ClassDeleting {
		return false, false, false
	}
	if serving == 0 || in.Serving != serving || in.State == "" {
		return true, false, false
	}
	if in.Phase().Class() == ClassFailed {
		return true, false, true
	}
	return true, true, false
}

// addRolled counts in into r.
func addRolled(r *Rollout, in *Instance, serving int64) {
	counted, updated, failed := Rolled(in, serving)
	if !counted {
		return
	}
	r.Total++
	if updated {
		r.Updated++
	}
	if failed {
		r.Failed++
	}
}
