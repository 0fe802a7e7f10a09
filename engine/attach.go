package engine

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kroscope/kroscope/engine/lease"
	"github.com/kroscope/kroscope/engine/readonly"
	"github.com/kroscope/kroscope/engine/state"
)

// Attaching: a kroscope that does not hold the Lease still lets its user
// requeue and delete. Both go through the cluster, the only writes an
// attached engine makes: requeue is a metadata-only merge patch of
// RequeueAnnotation (the generation does not move) that the holder's
// instance watch turns into an immediate reconcile; delete is an API delete.

const (
	// RequeueAnnotation carries the time (RFC 3339, nanoseconds, UTC) of
	// the last requeue asked for by an attached kroscope.
	RequeueAnnotation = "kroscope.dev/requeue"
	// RequeueFieldManager writes it: not kroscope's own manager, so kro
	// detection never reads a requeue as kroscope taking over from kro.
	RequeueFieldManager = "kroscope-requeue"
	// userWriteTimeout bounds one requeue patch (the TUI waits for it).
	userWriteTimeout = 5 * time.Second
)

// KroRequeueNote is what a requeue does on a cluster where kro's controller
// reconciles, as measured against kro v0.9.4 (test/kro
// TestKroIgnoresRequeueAnnotation): kro's instance watch drops updates that
// leave the generation unchanged (except its reconcile-suspension
// annotation), so the annotation alone does not make kro reconcile.
const KroRequeueNote = "kro ignores metadata-only changes (v0.9.4 checked): the " + RequeueAnnotation +
	" annotation is written, but kro reconciles only on a spec change, a change to one of the instance's resources, or its resync (10h by default)"

// decideCampaign: with CampaignIfFree, a Lease held by another live
// kroscope is followed for the rest of the run, never campaigned for.
func (e *Engine) decideCampaign(ctx context.Context) {
	kube := e.base.Kubernetes()
	if !e.o.CampaignIfFree || e.o.Observe || e.o.DisableLease || kube == nil {
		return
	}
	free, h, err := lease.Free(ctx, kube, e.o.LeaseNamespace, e.o.LeaseName, e.o.Identity, time.Now())
	if err != nil {
		e.log.Error(err, "cannot read the lease; campaigning for it")
		return
	}
	if free {
		return
	}
	e.mu.Lock()
	e.following = true
	e.holder = h.Identity
	e.mu.Unlock()
	e.store.SetMode(e.mode())
	e.log.Info("another kroscope holds the lease: not campaigning (--take-lease would)", "lease", e.o.LeaseNamespace+"/"+e.o.LeaseName, "holder", h.Identity, "attach", e.o.Attach)
	go lease.Follow(ctx, kube, e.o.LeaseNamespace, e.o.LeaseName, e.log, e.setFollowed)
}

// setFollowed records the followed Lease's holder.
func (e *Engine) setFollowed(h lease.Holder) {
	e.mu.Lock()
	moved := e.holder != h.Identity
	e.holder, e.holderExpired = h.Identity, h.Expired
	e.mu.Unlock()
	if moved {
		e.log.Info("the lease moved", "holder", h.Identity)
	} else if h.Expired {
		e.log.Info("the lease holder stopped renewing it", "holder", h.Identity)
	}
	e.store.SetMode(e.mode())
}

// attachedLocked: the user's actions go through the cluster (e.mu held):
// kro or another kroscope reconciles, or this user may not take (or read)
// the Lease, so whoever reconciles is elsewhere. The API server then
// decides, by the user's own RBAC, as for kubectl: a namespace user with
// delete on the kind deletes, and the holder tears the instance down.
func (e *Engine) attachedLocked() bool {
	if !e.o.Attach || e.o.Observe || e.gate.Open() {
		return false
	}
	return e.kro != "" || e.otherHolderLocked() || e.leaseDenied != ""
}

func (e *Engine) otherHolderLocked() bool { return e.holder != "" && e.holder != e.o.Identity }

func (e *Engine) requeueNoteLocked() string {
	if !e.attachedLocked() {
		return ""
	}
	if e.kro != "" {
		return KroRequeueNote
	}
	if e.holder == "" {
		return "wrote the " + RequeueAnnotation + " annotation for the lease holder (who it is, this user may not read)"
	}
	return "asked " + e.holder + " through the " + RequeueAnnotation + " annotation"
}

// userRoute says how the user's requeue or delete runs now: locally
// (reconciling, or nobody else reconciles yet), through the cluster
// (attached), or not at all (refused says why).
func (e *Engine) userRoute() (attached bool, refused string) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	switch {
	case e.gate.Open():
		return false, ""
	case e.o.Observe:
		return false, "kroscope runs read-only (--observe)"
	case e.attachedLocked():
		return true, ""
	case e.kro != "":
		return false, "observing only (--attach=false) while kro may be reconciling this cluster"
	case e.otherHolderLocked():
		return false, fmt.Sprintf("observing only (--attach=false) while %s holds the lease", e.holder)
	}
	return false, ""
}

// touchRequeue writes RequeueAnnotation on the instance: a metadata-only
// merge patch, the one write an attached requeue makes.
func (e *Engine) touchRequeue(s *served, key state.InstanceKey) error {
	base := e.ctx
	if base == nil {
		base = context.Background()
	}
	ctx, cancel := context.WithTimeout(readonly.UserWrite(base), userWriteTimeout)
	defer cancel()
	body := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, RequeueAnnotation, time.Now().UTC().Format(time.RFC3339Nano))
	_, err := e.set.Dynamic().Resource(s.gvr).Namespace(key.Namespace).Patch(ctx, key.Name, types.MergePatchType, []byte(body),
		metav1.PatchOptions{FieldManager: RequeueFieldManager})
	if err != nil {
		e.recheckAfterForbidden(s, err)
		return fmt.Errorf("writing the %s annotation on %s: %w", RequeueAnnotation, key, err)
	}
	return nil
}

// requeueAsked: someone (an attached kroscope) wrote a new requeue time.
func requeueAsked(old, cur metav1.Object) bool {
	return old.GetAnnotations()[RequeueAnnotation] != cur.GetAnnotations()[RequeueAnnotation]
}
