package reconciler

import (
	"github.com/kroscope/kroscope/reconciler/metadata"
)

// suspendedMessage is the ResourcesReady message while paused (kro's words).
const suspendedMessage = "reconciliation suspended via " + metadata.ReconcileAnnotation + " annotation"

// suspend handles an instance paused by its reconcile annotation: no child
// is read or written, only the status says so. Nothing is requeued: the
// annotation's removal is an instance change, which wakes it.
func (r *run) suspend() error {
	r.out.suspend()
	r.obs.suspended()
	if _, err := r.p.status.write(&r.out); err != nil {
		r.noteErr(err)
		return err
	}
	return nil
}
