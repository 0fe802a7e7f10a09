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
	// sendBy: while a Lease write is on its way, the last moment its
	// bytes may leave the process (zero: none on its way).
	sendBy time.Time
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

// MaySend reports whether the Lease write on its way (if any) may still
// leave the process: the Lease's connections ask before every write to
// the socket, so a renewal decided before a pause is not sent after it,
// when the Lease may have moved.
func (f *Fence) MaySend() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sendBy.IsZero() || f.now().Before(f.sendBy)
}

// sending marks a Lease write on its way until by (zero: done).
func (f *Fence) sending(by time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sendBy = by
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

// errLateLeaseWrite refuses a Lease write that waited past its deadline
// between the election's decision and the socket.
var errLateLeaseWrite = errors.New("not sending a lease write decided too long ago: the lease may have moved since (it is read again)")

// fencedLock is the Lease lock whose accepted writes renew the Fence. A
// write naming another holder (a release) lapses it before it is sent.
type fencedLock struct {
	resourcelock.Interface
	fence *Fence
	// grace is how long after the proof lapses a renewal may still leave
	// and reach the API server before another process can take the
	// Lease; margin is the least time a write just decided is given.
	grace, margin time.Duration
}

// newFencedLock fences inner, a lock on a Lease of duration d: a renewal
// may leave until d − Margin after the last one accepted was sent.
func newFencedLock(inner resourcelock.Interface, f *Fence, d time.Duration) *fencedLock {
	return &fencedLock{Interface: inner, fence: f, grace: d - f.valid - Margin(d), margin: Margin(d)}
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
		by := l.fence.Until()
		l.fence.Lapse()
		return l.sendBy(ctx, r, send, by)
	}
	sent := l.fence.now()
	err := l.sendBy(ctx, r, send, l.deadline(sent))
	if err == nil {
		l.fence.renewed(sent)
	}
	return err
}

// deadline is the last moment a renewal or acquisition decided at sent
// may leave the process: while the Lease, as this process last wrote it,
// cannot have moved (the proof's end plus grace), and never less than
// margin after the decision (an acquisition has no proof yet; the API
// server refuses it if the Lease changed since it was read).
func (l *fencedLock) deadline(sent time.Time) time.Time {
	by := sent.Add(l.margin)
	if u := l.fence.Until(); !u.IsZero() && u.Add(l.grace).After(by) {
		by = u.Add(l.grace)
	}
	return by
}

// sendBy sends r with the Fence saying, to the Lease's connections, until
// when its bytes may leave (MaySend).
func (l *fencedLock) sendBy(ctx context.Context, r resourcelock.LeaderElectionRecord, send func(context.Context, resourcelock.LeaderElectionRecord) error, by time.Time) error {
	l.fence.sending(by)
	defer l.fence.sending(time.Time{})
	return send(ctx, r)
}
