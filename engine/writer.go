package engine

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"

	"github.com/kroscope/kroscope/engine/authority"
	"github.com/kroscope/kroscope/engine/lease"
	"github.com/kroscope/kroscope/engine/readonly"
	"github.com/kroscope/kroscope/engine/state"
)

// writer acts on the write authority's decisions: it owns the facts
// (authority.Authority), the write gate they open, and the Lease
// campaign they start and stop. Every change of a fact goes through
// update; the groups that gather facts (peers, kroPresence, access) see
// the writer as authorityFacts.
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

	o     Options // the Lease: its name, this process's identity, the scope
	store *state.Store
	log   logr.Logger
	// wakeAll re-checks every instance at once (the gate changed).
	wakeAll func()
}

// authorityFacts is the writer as the groups that gather its facts see it.
type authorityFacts interface {
	update(change func(*authority.Facts))
	decision() authority.Decision
	facts() authority.Facts
}

func newWriter(o Options, store *state.Store, log logr.Logger, wakeAll func()) *writer {
	auth := authority.New(authority.Facts{
		Observe: o.Observe, NoLease: o.DisableLease, LeaseClient: o.ClientSet.Kubernetes() != nil,
		Identity: o.Identity, TakeOver: o.TakeOver, Attach: o.Attach,
		Writers: authority.WriterFacts{Lease: o.leaseName(), Scope: o.Namespace},
		Consent: authority.ConsentFacts{Ask: o.AskBeforeWriting},
	})
	w := &writer{auth: auth, gate: readonly.NewGate(auth.Decision().GateOpen), opened: make(chan struct{}, 1),
		o: o, store: store, log: log, wakeAll: wakeAll}
	if auth.Decision().UsesLease {
		w.fence = lease.FenceFor(o.LeaseDuration)
		w.gate.SetFence(w.fence)
	}
	return w
}

// writeGate is the gate every write of the engine's client set passes.
func (w *writer) writeGate() *readonly.Gate { return w.gate }

// writing reports whether reconciles write now (the gate is open).
func (w *writer) writing() bool { return w.gate.Open() }

// decision is the write authority's decision now.
func (w *writer) decision() authority.Decision { return w.auth.Decision() }

// facts are the write authority's facts now.
func (w *writer) facts() authority.Facts { return w.auth.Facts() }

// update records a change of the facts and acts on the decision: the
// header's mode, the gate (on a change every instance is re-checked at
// once, its reconcile asking the gate whether it writes) and
// the Lease campaign.
func (w *writer) update(change func(*authority.Facts)) {
	w.auth.Update(change)
	w.mu.Lock()
	d := w.auth.Decision()
	changed := w.gate.Open() != d.GateOpen
	w.gate.Set(d.GateOpen)
	w.store.SetMode(d.Mode)
	w.campaignLocked(d.Campaign)
	w.mu.Unlock()
	if !changed {
		return
	}
	w.wakeAll() // each reconcile asks the gate (client.Set.MayWrite)
	if d.GateOpen {
		select { // syncWhenWriting writes what the previous writer left
		case w.opened <- struct{}{}:
		default:
		}
	}
}

// syncWhenWriting runs sync each time this process starts writing, until
// ctx is done.
func (w *writer) syncWhenWriting(ctx context.Context, sync func(context.Context)) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.opened:
			sync(ctx)
		}
	}
}

// campaignLocked runs the Lease election while the decision says so, and
// stops it (releasing the Lease) otherwise: with kro running, kroscope
// does not even write its Lease (w.mu held).
func (w *writer) campaignLocked(want bool) {
	switch {
	case want && w.cancel == nil:
		// Not ended by the engine's context: shutdown ends it once the
		// workers have stopped (see Engine.shutdown).
		ctx, cancel := context.WithCancel(context.Background())
		w.cancel = cancel
		done := make(chan struct{})
		w.done = done
		go func() {
			defer close(done)
			err := lease.Run(ctx, lease.Config{
				Client: w.o.ClientSet.Kubernetes(), Rest: w.o.ClientSet.Config(), Namespace: w.o.LeaseNamespace, Name: w.o.LeaseName, Identity: w.o.Identity,
				LeaseDuration: w.o.LeaseDuration, Log: w.log,
				OnStarted: func() { w.setLeading(true) },
				OnStopped: func() { w.setLeading(false) },
				OnHolder:  w.setHolder,
				Fence:     w.fence,
				OnFence:   w.fenceChanged,
				Scope:     w.o.Namespace,
			})
			if err != nil {
				w.log.Error(err, "lease")
			}
		}()
	case !want && w.cancel != nil:
		w.cancel()
		w.cancel = nil
	}
}

// releaseLease stops the campaign for good (shutdown, once no worker
// writes any more) and returns what to wait on for the Lease's release.
func (w *writer) releaseLease() <-chan struct{} {
	w.update(func(f *authority.Facts) { f.Running = false })
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.done
}

// fenceChanged hears the Lease holder's proof lapse or hold again. The
// gate asks the proof itself at every write; this says so in the log and,
// when it holds again, re-checks every instance whose write was refused.
func (w *writer) fenceChanged(valid bool) {
	if !valid {
		if w.decision().GateOpen {
			w.lapsed.Store(true)
			w.log.Info("cannot prove this kroscope still holds the lease (not renewed in time): writes refused until it is renewed or lost",
				"lease", w.o.leaseName())
		}
		return
	}
	if w.lapsed.Swap(false) && w.decision().GateOpen {
		w.log.Info("lease renewed: writing again", "lease", w.o.leaseName())
		w.wakeAll()
	}
}

func (w *writer) setHolder(id string) {
	w.update(func(f *authority.Facts) { f.Holder = id })
}

// setLeading records whether this process holds the lease.
func (w *writer) setLeading(on bool) {
	w.update(func(f *authority.Facts) {
		f.Leading = on
		if on {
			f.Holder = f.Identity
		}
	})
}

// consent records the user's yes (Engine.Consent).
func (w *writer) consent() {
	w.update(func(f *authority.Facts) { f.Consent.Given = true })
	w.log.Info("the user said yes: reconciling with their credentials", "user", w.store.Snapshot().Capabilities.User)
}

// Consent is the user's yes: the TUI may take the Lease and write with
// the user's credentials (Mode.Ask asked it).
func (e *Engine) Consent() { e.wr.consent() }
