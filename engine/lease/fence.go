package lease

import (
	"context"
	"errors"
	"sync"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Fence is the holder's proof, on its own monotonic clock, that its Lease
// is still valid: the write gate asks it before every write. client-go's
// election tells a holder it lost the Lease only when its goroutine runs
// again; a process paused (SIGSTOP, a GC pause, a frozen VM) past the
// Lease's duration resumes believing it leads while another holds the
// Lease. The Fence does not wait to be told: it lapses by itself.
//
// The proof: a renewal of the Lease sent at local time S and accepted
// means no other process can take the Lease before S + LeaseDuration by
// its own clock (a standby counts the duration from when it saw the
// renewal, which is after S). The Fence holds until S + RenewDeadline −
// Margin, so the rest (LeaseDuration − RenewDeadline + Margin, 6 s of the
// 15 s default) covers a write that passed the gate and is still on its
// way, and clocks that run at different rates. The clocks' offsets do not
// matter (each side measures its own intervals, time.Now's monotonic
// reading); their rates must agree to within that share of the duration.
type Fence struct {
	mu    sync.Mutex
	until time.Time // carries the monotonic reading of the send time
	valid time.Duration
	now   func() time.Time
}

// NewFence returns a Fence that holds for valid after each renewal sent
// (RenewDeadline − Margin) and lapsed until the first.
func NewFence(valid time.Duration) *Fence { return &Fence{valid: valid, now: time.Now} }

// Valid reports whether the proof holds now.
func (f *Fence) Valid() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return !f.until.IsZero() && f.now().Before(f.until)
}

// Until is when the proof lapses (zero when it has).
func (f *Fence) Until() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.until
}

// renewed records a renewal sent at sent and accepted. An older one than
// the newest recorded never shortens the proof.
func (f *Fence) renewed(sent time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if u := sent.Add(f.valid); u.After(f.until) {
		f.until = u
	}
}

// Lapse ends the proof at once (the Lease is being released).
func (f *Fence) Lapse() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.until = time.Time{}
}

// Margin is subtracted from the renew deadline: a share of the duration
// for the time between the gate's check and the request reaching the API
// server.
func Margin(leaseDuration time.Duration) time.Duration { return leaseDuration / 15 }

// errNotHeld refuses a release that could clear another holder's Lease.
var errNotHeld = errors.New("not releasing the lease: this process cannot prove it still holds it (it expires by itself)")

// fencedLock is the Lease lock whose accepted writes renew the Fence. A
// write naming another holder (a release) lapses it before it is sent.
type fencedLock struct {
	resourcelock.Interface
	fence *Fence
}

func (l *fencedLock) Create(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	return l.write(ctx, r, l.Interface.Create)
}

func (l *fencedLock) Update(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	return l.write(ctx, r, l.Interface.Update)
}

func (l *fencedLock) write(ctx context.Context, r resourcelock.LeaderElectionRecord, send func(context.Context, resourcelock.LeaderElectionRecord) error) error {
	if r.HolderIdentity != l.Identity() {
		// A release. client-go's elector releases after it failed to
		// renew, reading the Lease afresh but judging by the record it
		// saw last: once another has taken the Lease, that release
		// would clear the new holder's. A holder that cannot prove it
		// still holds the Lease does not release it (it expires).
		if !l.fence.Valid() {
			return errNotHeld
		}
		l.fence.Lapse()
		return send(ctx, r)
	}
	sent := l.fence.now()
	err := send(ctx, r)
	if err == nil {
		l.fence.renewed(sent)
	}
	return err
}
