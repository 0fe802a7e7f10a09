package lease

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"

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

// fakeLock is a Lease lock whose writes succeed or fail as told, and
// which records whether the fence held when each write was sent.
type fakeLock struct {
	resourcelock.Interface
	fail       bool
	fence      *Fence
	heldAtSend []bool
}

func (l *fakeLock) Identity() string { return "me" }
func (l *fakeLock) Update(context.Context, resourcelock.LeaderElectionRecord) error {
	l.heldAtSend = append(l.heldAtSend, l.fence.Valid())
	if l.fail {
		return errors.New("conflict")
	}
	return nil
}

// The fence holds from a renewal's send time for RenewDeadline − Margin
// by the local clock, and no longer; a failed renewal proves nothing; a
// release lapses it before it is sent.
func TestFenceHoldsOnlyAsLongAsTheProof(t *testing.T) {
	clock := time.Unix(1000, 0)
	f := FenceFor(15 * time.Second)
	f.now = func() time.Time { return clock }
	if f.Valid() {
		t.Fatal("a fence never renewed holds")
	}
	inner := &fakeLock{fence: f}
	lock := &fencedLock{Interface: inner, fence: f}
	mine := resourcelock.LeaderElectionRecord{HolderIdentity: "me"}
	if err := lock.Update(context.Background(), mine); err != nil {
		t.Fatal(err)
	}
	valid := RenewDeadline(15*time.Second) - Margin(15*time.Second) // 9s
	for _, c := range []struct {
		after time.Duration
		want  bool
	}{{0, true}, {valid - time.Millisecond, true}, {valid, false}, {15 * time.Second, false}} {
		clock = time.Unix(1000, 0).Add(c.after)
		if got := f.Valid(); got != c.want {
			t.Errorf("%v after the renewal was sent: Valid = %v, want %v", c.after, got, c.want)
		}
	}
	// A renewal that fails does not extend the proof.
	inner.fail = true
	clock = time.Unix(1000, 0).Add(5 * time.Second)
	_ = lock.Update(context.Background(), mine)
	clock = time.Unix(1000, 0).Add(valid)
	if f.Valid() {
		t.Error("a failed renewal extended the proof")
	}
	// A release while the proof has lapsed is not sent: client-go's
	// elector releases after a failed renewal, judging by the record it
	// saw last, and would clear the Lease of the holder that took it.
	sent := len(inner.heldAtSend)
	if err := lock.Update(context.Background(), resourcelock.LeaderElectionRecord{}); err == nil || len(inner.heldAtSend) != sent {
		t.Errorf("a release with the proof lapsed: err = %v, sent %d", err, len(inner.heldAtSend)-sent)
	}
	// A release (no holder) lapses the proof before it is sent.
	inner.fail = false
	clock = time.Unix(2000, 0)
	_ = lock.Update(context.Background(), mine)
	if !f.Valid() {
		t.Fatal("renewed fence does not hold")
	}
	_ = lock.Update(context.Background(), resourcelock.LeaderElectionRecord{})
	if inner.heldAtSend[len(inner.heldAtSend)-1] {
		t.Error("the fence still held while the release was sent")
	}
	if f.Valid() {
		t.Error("the fence holds after the release")
	}
}

// The proof leaves the standby's takeover a margin: a standby takes the
// Lease no sooner than LeaseDuration after it saw the last renewal, which
// is after it was sent.
func TestFenceLapsesBeforeAStandbyCanTakeOver(t *testing.T) {
	for _, d := range []time.Duration{3 * time.Second, 15 * time.Second, time.Minute} {
		valid := RenewDeadline(d) - Margin(d)
		if gap := d - valid; gap < d/4 {
			t.Errorf("lease %v: the fence holds %v, leaving %v before a standby may take over; want at least a quarter of the duration", d, valid, gap)
		}
	}
}

// Others: a kroscope Lease is live while its holder renews it within its
// duration (by the local clock from when the renewal was seen); one first
// seen already expired by its own record, or released, is not.
func TestOthersLiveness(t *testing.T) {
	now := time.Now()
	d := int32(15)
	lease := func(name, holder, rv string, renewed time.Time) *coordinationv1.Lease {
		r := metav1.NewMicroTime(renewed)
		return &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv, Labels: map[string]string{ScopeLabel: "team-a"}},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &d, RenewTime: &r, AcquireTime: &r},
		}
	}
	o := &Others{leases: map[string]*seenWriter{}}
	o.seen(lease("live", "a", "1", now), now)
	o.seen(lease("stale", "b", "1", now.Add(-time.Minute)), now)
	o.seen(lease("released", "", "1", now), now)
	got := map[string]Writer{}
	for _, w := range o.Writers() {
		got[w.Lease] = w
	}
	if w := got["ns/live"]; !w.Live || w.Holder != "a" || w.Scope != "team-a" {
		t.Errorf("renewed just now: %+v", w)
	}
	if got["ns/stale"].Live {
		t.Errorf("first seen a minute after its last renewal, 15s lease: %+v", got["ns/stale"])
	}
	if got["ns/released"].Live {
		t.Errorf("released: %+v", got["ns/released"])
	}
	// Seen renewed (a new resourceVersion): live again from now.
	o.seen(lease("stale", "b", "2", now), now)
	for _, w := range o.Writers() {
		if w.Lease == "ns/stale" && !w.Live {
			t.Errorf("renewed: %+v", w)
		}
	}
}
