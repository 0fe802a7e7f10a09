package lease

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A Lease's holder counts as gone once it has not renewed within the
// lease's duration; an unheld Lease has no holder to expire.
func TestHolderOfExpiry(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	lease := func(holder string, renewedAgo time.Duration) *coordinationv1.Lease {
		d := int32(15)
		renewed := metav1.NewMicroTime(now.Add(-renewedAgo))
		return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &d, RenewTime: &renewed}}
	}
	for _, c := range []struct {
		name string
		l    *coordinationv1.Lease
		want Holder
	}{
		{"renewed 5s ago", lease("pod-a", 5*time.Second), Holder{Identity: "pod-a"}},
		{"renewed 16s ago", lease("pod-a", 16*time.Second), Holder{Identity: "pod-a", Expired: true}},
		{"released", lease("", time.Hour), Holder{}},
	} {
		if got := holderOf(c.l, now); got != c.want {
			t.Errorf("%s: holderOf = %+v, want %+v", c.name, got, c.want)
		}
	}
}
