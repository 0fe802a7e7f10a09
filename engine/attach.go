package engine

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kroscope/kroscope/engine/authority"
	"github.com/kroscope/kroscope/engine/readonly"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler/client"
)

// Attaching: a kroscope that does not hold the Lease still lets its user
// requeue and delete. Both go through the cluster, the only writes an
// attached engine makes: requeue is a metadata-only merge patch of
// RequeueAnnotation (the generation does not move) that the holder's
// instance watch turns into an immediate reconcile; delete is an API delete.

const (
	// RequeueAnnotation carries the time (RFC 3339, nanoseconds, UTC) of
	// the last requeue asked for by an attached kroscope.
	RequeueAnnotation = authority.RequeueAnnotation
	// RequeueFieldManager writes it: not kroscope's own manager, so kro
	// detection never reads a requeue as kroscope taking over from kro.
	RequeueFieldManager = "kroscope-requeue"
	// userWriteTimeout bounds one requeue patch (the TUI waits for it).
	userWriteTimeout = 5 * time.Second
)

// KroRequeueNote is what a requeue does where kro's controller reconciles.
const KroRequeueNote = authority.KroRequeueNote

// touchRequeue writes RequeueAnnotation on the instance through set: a
// metadata-only merge patch, the one write an attached requeue makes.
func touchRequeue(set *client.Set, s *served, key state.InstanceKey) error {
	// The user's own action, bounded on its own: Requeue has no context.
	ctx, cancel := context.WithTimeout(readonly.UserWrite(context.Background()), userWriteTimeout)
	defer cancel()
	body := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, RequeueAnnotation, time.Now().UTC().Format(time.RFC3339Nano))
	_, err := set.Dynamic().Resource(s.gvr).Namespace(key.Namespace).Patch(ctx, key.Name, types.MergePatchType, []byte(body),
		metav1.PatchOptions{FieldManager: RequeueFieldManager})
	if err != nil {
		return fmt.Errorf("writing the %s annotation on %s: %w", RequeueAnnotation, key, err)
	}
	return nil
}

// requeueAsked: someone (an attached kroscope) wrote a new requeue time.
func requeueAsked(old, cur metav1.Object) bool {
	return old.GetAnnotations()[RequeueAnnotation] != cur.GetAnnotations()[RequeueAnnotation]
}
