package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kroscope/kroscope/engine/authority"
	"github.com/kroscope/kroscope/engine/krodetect"
	"github.com/kroscope/kroscope/engine/lease"
	"github.com/kroscope/kroscope/engine/readonly"
)

// writer acts on the write authority's decisions: it owns the facts
// (authority.Authority), the write gate they open, and the Lease
// campaign they start and stop. Every change of a fact goes through
// Engine.update.
type writer struct {
	auth *authority.Authority
	gate *readonly.Gate
	// mu orders the acting on decisions, and guards cancel and done.
	mu sync.Mutex
	// cancel stops the running Lease campaign (nil when none runs).
	cancel context.CancelFunc
	// done is closed when the last campaign started has returned, its
	// Lease released: shutdown waits for it, or the process would exit
	// still holding the Lease and the next holder wait out its duration.
	done chan struct{}
	// opened is signalled when the gate opens (see syncWhenWriting).
	opened chan struct{}
	// fence is the Lease holder's proof that it still holds the Lease:
	// the gate asks it at every write (nil without a Lease).
	fence *lease.Fence
	// lapsed: the proof lapsed while the gate was open (fenceChanged).
	lapsed atomic.Bool
	// others follows every kroscope Lease (followOtherWriters).
	others atomic.Pointer[lease.Others]
}

func newWriter(o Options, leaseClient bool) *writer {
	auth := authority.New(authority.Facts{
		Observe: o.Observe, NoLease: o.DisableLease, LeaseClient: leaseClient,
		Identity: o.Identity, TakeOver: o.TakeOver, Attach: o.Attach,
		Writers: authority.WriterFacts{Lease: o.LeaseNamespace + "/" + o.LeaseName, Scope: o.Namespace},
		Consent: authority.ConsentFacts{Ask: o.AskBeforeWriting},
	})
	w := &writer{auth: auth, gate: readonly.NewGate(auth.Decision().GateOpen), opened: make(chan struct{}, 1)}
	if auth.Decision().UsesLease {
		w.fence = lease.FenceFor(o.LeaseDuration)
		w.gate.SetFence(w.fence)
	}
	return w
}

// writing reports whether reconciles write now (the gate is open).
func (e *Engine) writing() bool { return e.wr.gate.Open() }

// leaseDenied says why this user may not take the Lease ("" when it may).
func (e *Engine) leaseDenied() string { return e.wr.auth.Facts().LeaseDenied }

// decision is the write authority's decision now.
func (e *Engine) decision() authority.Decision { return e.wr.auth.Decision() }

// update records a change of the facts and acts on the decision: the
// header's mode, the gate (on a change every instance is re-checked at
// once, its reconcile asking the gate whether it writes) and
// the Lease campaign.
func (e *Engine) update(change func(*authority.Facts)) {
	e.wr.auth.Update(change)
	w := e.wr
	w.mu.Lock()
	d := w.auth.Decision()
	changed := w.gate.Open() != d.GateOpen
	w.gate.Set(d.GateOpen)
	e.store.SetMode(d.Mode)
	e.campaignLocked(d.Campaign)
	w.mu.Unlock()
	if !changed {
		return
	}
	for _, s := range e.graphs.all() {
		e.enqueueAll(s) // each reconcile asks the gate (client.Set.MayWrite)
	}
	if d.GateOpen {
		select { // syncWhenWriting writes what the previous writer left
		case w.opened <- struct{}{}:
		default:
		}
	}
}

// syncWhenWriting re-writes the cluster graphs' status each time this
// process starts writing, until ctx is done.
func (e *Engine) syncWhenWriting(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-e.wr.opened:
			e.syncAllRGDStatus(ctx)
		}
	}
}

// campaignLocked runs the Lease election while the decision says so, and
// stops it (releasing the Lease) otherwise: with kro running, kroscope
// does not even write its Lease (e.wr.mu held).
func (e *Engine) campaignLocked(want bool) {
	w := e.wr
	switch {
	case want && w.cancel == nil:
		// Not ended by the engine's context: shutdown ends it once the
		// workers have stopped (see shutdown).
		ctx, cancel := context.WithCancel(context.Background())
		w.cancel = cancel
		done := make(chan struct{})
		w.done = done
		go func() {
			defer close(done)
			err := lease.Run(ctx, lease.Config{
				Client: e.cl.base.Kubernetes(), Namespace: e.o.LeaseNamespace, Name: e.o.LeaseName, Identity: e.o.Identity,
				LeaseDuration: e.o.LeaseDuration, Log: e.log,
				OnStarted: func() { e.setLeading(true) },
				OnStopped: func() { e.setLeading(false) },
				OnHolder:  e.setHolder,
				Fence:     w.fence,
				OnFence:   e.fenceChanged,
				Scope:     e.o.Namespace,
			})
			if err != nil {
				e.log.Error(err, "lease")
			}
		}()
	case !want && w.cancel != nil:
		w.cancel()
		w.cancel = nil
	}
}

// releaseLease stops the campaign for good (shutdown, once no worker
// writes any more) and returns what to wait on for the Lease's release.
func (e *Engine) releaseLease() <-chan struct{} {
	e.update(func(f *authority.Facts) { f.Running = false })
	e.wr.mu.Lock()
	defer e.wr.mu.Unlock()
	return e.wr.done
}

// fenceChanged hears the Lease holder's proof lapse or hold again. The
// gate asks the proof itself at every write; this says so in the log and,
// when it holds again, re-checks every instance whose write was refused.
func (e *Engine) fenceChanged(valid bool) {
	if !valid {
		if e.decision().GateOpen {
			e.wr.lapsed.Store(true)
			e.log.Info("cannot prove this kroscope still holds the lease (not renewed in time): writes refused until it is renewed or lost",
				"lease", e.o.LeaseNamespace+"/"+e.o.LeaseName)
		}
		return
	}
	if e.wr.lapsed.Swap(false) && e.decision().GateOpen {
		e.log.Info("lease renewed: writing again", "lease", e.o.LeaseNamespace+"/"+e.o.LeaseName)
		for _, s := range e.graphs.all() {
			e.enqueueAll(s)
		}
	}
}

func (e *Engine) setHolder(id string) {
	e.update(func(f *authority.Facts) { f.Holder = id })
}

// setLeading records whether this process holds the lease.
func (e *Engine) setLeading(on bool) {
	e.update(func(f *authority.Facts) {
		f.Leading = on
		if on {
			f.Holder = f.Identity
		}
	})
}

// setKro records krodetect's verdict and returns the line it had before
// ("" when kroscope could write).
func (e *Engine) setKro(v krodetect.Verdict) (was string) {
	e.update(func(f *authority.Facts) {
		was = f.Kro.Line(f.TakeOver)
		f.Kro = v
	})
	return was
}

// decideCampaign: with CampaignIfFree, a Lease held by another live
// kroscope is followed for the rest of the run, never campaigned for.
func (e *Engine) decideCampaign(ctx context.Context) {
	if !e.o.CampaignIfFree || !e.decision().UsesLease {
		return
	}
	kube := e.cl.base.Kubernetes()
	free, h, err := lease.Free(ctx, kube, e.o.LeaseNamespace, e.o.LeaseName, e.o.Identity, time.Now())
	if err != nil {
		e.log.Error(err, "cannot read the lease; campaigning for it")
		return
	}
	if free {
		return
	}
	e.update(func(f *authority.Facts) { f.Following, f.Holder = true, h.Identity })
	e.log.Info("another kroscope holds the lease: not campaigning (--take-lease would)", "lease", e.o.LeaseNamespace+"/"+e.o.LeaseName, "holder", h.Identity, "attach", e.o.Attach)
	go lease.Follow(ctx, kube, e.o.LeaseNamespace, e.o.LeaseName, e.log, e.setFollowed)
}

// setFollowed records the followed Lease's holder.
func (e *Engine) setFollowed(h lease.Holder) {
	moved := false
	e.update(func(f *authority.Facts) {
		moved = f.Holder != h.Identity
		f.Holder, f.HolderExpired = h.Identity, h.Expired
	})
	if moved {
		e.log.Info("the lease moved", "holder", h.Identity)
	} else if h.Expired {
		e.log.Info("the lease holder stopped renewing it", "holder", h.Identity)
	}
}

// setLeaseDenied records why this user may not take the Lease ("" once
// it may): the engine's campaign decision, the header and the mode.
func (e *Engine) setLeaseDenied(why string) {
	e.store.SetLeaseDenied(why)
	e.update(func(f *authority.Facts) { f.LeaseDenied = why })
}

// followOtherWriters watches every kroscope Lease, so that this kroscope
// observes while another one, under another Lease, writes the same
// instances (authority.OtherWriter). One that cannot list them cannot
// prove it is the only writer, and observes, saying why.
func (e *Engine) followOtherWriters(ctx context.Context) {
	if !e.decision().UsesLease {
		return
	}
	e.update(func(f *authority.Facts) { f.Consent.User = e.store.Snapshot().Capabilities.User })
	if e.listOtherWriters(ctx) || e.o.AccessRecheck < 0 {
		return
	}
	// Asked again with the kinds' access: a grant made later (list and
	// watch on Leases) lets this kroscope write without a restart.
	go func() {
		t := time.NewTicker(e.o.AccessRecheck)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if e.listOtherWriters(ctx) {
					e.log.Info("kroscope's Leases can be listed now: another kroscope writing these instances would be seen")
					return
				}
			}
		}
	}()
}

// listOtherWriters starts following the kroscope Leases and reports
// whether it could; when not, the facts say why.
func (e *Engine) listOtherWriters(ctx context.Context) bool {
	others, err := lease.ListOthers(ctx, e.cl.base.Kubernetes(), e.log, func() { e.setOtherWriters(nil) })
	if err != nil {
		why := err.Error()
		if apierrors.IsForbidden(err) {
			why = "this user may not list Leases in all namespaces"
		}
		was := e.wr.auth.Facts().Writers.Unknown
		e.update(func(f *authority.Facts) { f.Writers.Unknown = why })
		if was != why {
			e.log.Info("cannot tell whether another kroscope writes these instances: observing", "why", why)
		}
		return false
	}
	e.wr.others.Store(others)
	e.update(func(f *authority.Facts) { f.Writers.Unknown = "" })
	e.setOtherWriters(others)
	return true
}

// setOtherWriters records the kroscope Leases seen (others nil: the ones
// followed) and logs a change of the other writer.
func (e *Engine) setOtherWriters(others *lease.Others) {
	if others == nil {
		if others = e.wr.others.Load(); others == nil {
			return // the first list is recorded by followOtherWriters
		}
	}
	seen := others.Writers()
	var was, now string
	e.update(func(f *authority.Facts) {
		was = authority.Decide(*f).Mode.Writer
		f.Writers.Seen = seen
		now = authority.Decide(*f).Mode.Writer
	})
	switch {
	case now == was:
	case now != "":
		e.log.Info(now)
	default:
		e.log.Info("no other kroscope writes these instances now", "was", was)
	}
}

// Consent is the user's yes: the TUI may take the Lease and write with
// the user's credentials (Mode.Ask asked it).
func (e *Engine) Consent() {
	e.update(func(f *authority.Facts) { f.Consent.Given = true })
	e.log.Info("the user said yes: reconciling with their credentials", "user", e.store.Snapshot().Capabilities.User)
}
