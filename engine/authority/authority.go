// Package authority decides who may write: from the facts the engine
// gathers (its flags, the Lease, kro's presence, this user's access) one
// pure function, Decide, says whether the write gate is open, whether to
// campaign for the Lease, where the user's requeue, delete and edit go,
// and the Mode shown. The engine records facts in an Authority and acts
// on its decisions; nothing else in the engine reads --observe.
package authority

import (
	"fmt"
	"sync"

	"github.com/kroscope/kroscope/engine/krodetect"
	"github.com/kroscope/kroscope/engine/lease"
	"github.com/kroscope/kroscope/engine/state"
)

// Facts are everything the decision rests on.
type Facts struct {
	// Observe is --observe: nothing is ever written.
	Observe bool
	// NoLease: the engine writes without a Lease (the demo).
	NoLease bool
	// LeaseClient: a typed client is there to take the Lease with.
	LeaseClient bool
	// Running: the engine's startup checks are done (the Lease followed
	// or its access denied, as they will be) and it has not begun to stop.
	Running bool
	// Identity is this process's name in the Lease; Holder the holder's
	// as last seen ("" when nobody holds it or this user may not read it).
	Identity, Holder string
	// Leading: this process holds the Lease.
	Leading bool
	// Following: the Lease was held by another live kroscope at start
	// (CampaignIfFree), so it is followed and never campaigned for;
	// HolderExpired is the followed holder's renewal overdue.
	Following, HolderExpired bool
	// Kro is krodetect's verdict on kro's controller; TakeOver is
	// --take-over (which the verdict's line mentions).
	Kro      krodetect.Verdict
	TakeOver bool
	// LeaseDenied says why this user may not take the Lease ("" when it
	// may, or it was not checked).
	LeaseDenied string
	// Attach (--attach): forward the user's requeue and delete to the
	// cluster while another reconciles.
	Attach bool
	// Writers: the other kroscopes' Leases (another --lease-namespace or
	// --lease-name), for OtherWriter.
	Writers WriterFacts
	// Consent: the TUI's question before it becomes the cluster's writer.
	Consent ConsentFacts
}

// WriterFacts are what this kroscope knows of every kroscope Lease.
type WriterFacts struct {
	// Lease is this kroscope's own Lease ("namespace/name"); Scope the
	// namespace whose instances it writes ("" all).
	Lease, Scope string
	// Seen are the kroscope Leases seen in the cluster, its own included.
	Seen []lease.Writer
	// Unknown says why the others cannot be seen ("" when they can):
	// this kroscope then cannot prove it is the only writer, and observes.
	Unknown string
}

// ConsentFacts: a TUI about to become the cluster's writer with the
// user's own credentials asks first (unless --yes).
type ConsentFacts struct {
	// Ask: the question is asked; Given: the user said yes.
	Ask, Given bool
	// User is whom the writes would be sent as ("" unknown).
	User string
}

// OtherWriter returns the kroscope that writes the instances this one
// would, under another Lease, and is to keep writing: live, its scope
// overlapping (one of the two all namespaces, or the same namespace),
// and its Lease taken before this one's (its acquire time, then its name,
// so of two that see each other exactly one gives way; one whose own
// Lease is not seen yet gives way to every other).
func OtherWriter(w WriterFacts, identity string) (lease.Writer, bool) {
	var mine *lease.Writer
	for i := range w.Seen {
		if w.Seen[i].Lease == w.Lease && w.Seen[i].Holder == identity {
			mine = &w.Seen[i]
		}
	}
	for _, o := range w.Seen {
		if o.Lease == w.Lease || !o.Live || o.Holder == identity || (o.Scope != "" && w.Scope != "" && o.Scope != w.Scope) {
			continue
		}
		if mine == nil || o.Acquired.Before(mine.Acquired) || (o.Acquired.Equal(mine.Acquired) && o.Lease < mine.Lease) {
			return o, true
		}
	}
	return lease.Writer{}, false
}

// otherWriterLine says why another kroscope's writing stops this one
// ("" when none does).
func otherWriterLine(f Facts) string {
	if f.Observe || f.NoLease || !f.LeaseClient {
		return ""
	}
	// Not knowing matters only to a kroscope that would campaign: one
	// that follows a holder or may not take the Lease writes nothing.
	if f.Writers.Unknown != "" && !f.Following && f.LeaseDenied == "" {
		return "cannot tell whether another kroscope writes these instances (" + f.Writers.Unknown + "): observing"
	}
	if o, ok := OtherWriter(f.Writers, f.Identity); ok {
		return "another kroscope writes these instances (" + o.String() + "): observing, so that one writes them"
	}
	return ""
}

// otherHolder is the other writer's identity ("" for none).
func otherHolder(f Facts) string {
	if f.Observe || f.NoLease || !f.LeaseClient || f.Writers.Unknown != "" {
		return ""
	}
	o, _ := OtherWriter(f.Writers, f.Identity)
	return o.Holder
}

// Route is where a user's action goes.
type Route int

const (
	// Local: this engine does it (its queue; a delete through the gate).
	Local Route = iota
	// Cluster: attached, through the cluster as the user's own write (the
	// requeue annotation, an API delete).
	Cluster
	// Refused: not at all; Action.Why says why.
	Refused
)

// Action is the decision on one kind of user action.
type Action struct {
	Route Route
	Why   string // when Refused
}

// Decision is what the facts decide.
type Decision struct {
	// GateOpen: reconciles write.
	GateOpen bool
	// UsesLease: the Lease matters at all (not --observe, not lease-less,
	// a client to take it with): its access is checked, a held one
	// followed.
	UsesLease bool
	// NoLeaseClient: a Lease is needed but there is no client to take it
	// with, so this engine only observes.
	NoLeaseClient bool
	// Campaign: run the Lease election now (stop it otherwise).
	Campaign bool
	// Requeue, Delete and Edit: the user's actions. ApplyGraph writes a
	// graph's definition (the plan view's apply): the user's own write to
	// the cluster, as a delete is.
	Requeue, Delete, Edit, ApplyGraph Action
	// Mode is what the header shows.
	Mode state.Mode
}

// Decide is the one place that decides who may write.
func Decide(f Facts) Decision {
	kro := f.Kro.Line(f.TakeOver)
	writer := otherWriterLine(f)
	if h := otherHolder(f); h != "" && (f.Holder == "" || f.Holder == f.Identity) {
		f.Holder = h // shown, and named in the refusals, as the holder
	}
	wantsLease := !f.Observe && !f.NoLease
	d := Decision{
		GateOpen:      !f.Observe && (f.NoLease || f.Leading) && kro == "" && writer == "",
		UsesLease:     wantsLease && f.LeaseClient,
		NoLeaseClient: wantsLease && !f.LeaseClient,
	}
	asking := AwaitingConsent(f)
	d.Campaign = d.UsesLease && kro == "" && writer == "" && !f.Following && f.LeaseDenied == "" && f.Running && !asking
	other := f.Holder != "" && f.Holder != f.Identity
	attached := f.Attach && !f.Observe && !d.GateOpen && (kro != "" || other || f.LeaseDenied != "" || writer != "")
	d.Requeue = userAction(f, d.GateOpen, attached, kro, other)
	if d.Requeue.Route == Local && !d.GateOpen && writer != "" {
		d.Requeue = Action{Refused, "observing only (--attach=false): " + writer}
	}
	d.Delete = d.Requeue
	if d.Delete.Route == Local && !d.GateOpen {
		d.Delete = Action{Refused, "observing until this kroscope holds the lease"}
	}
	d.Edit = editAction(f, d.GateOpen)
	d.ApplyGraph = d.Delete
	d.Mode = mode(f, d.GateOpen, attached, kro)
	d.Mode.Writer = writer
	if asking {
		d.Mode.Ask = consentQuestion(f.Consent.User)
	}
	return d
}

// AwaitingConsent: the Lease is free and this TUI would take it, writing
// with the user's own credentials, but the user has not said yes yet.
func AwaitingConsent(f Facts) bool {
	return f.Consent.Ask && !f.Consent.Given && !f.Observe && !f.NoLease && f.LeaseClient &&
		f.Kro.MayWrite() && otherWriterLine(f) == "" && !f.Following && f.LeaseDenied == "" && f.Holder == ""
}

func consentQuestion(user string) string {
	if user == "" {
		user = "your kubeconfig's user"
	}
	return "no kroscope or kro reconciles this cluster: kroscope would write as " + user +
		", running every graph's templates with your rights; W to reconcile (--yes skips this question)"
}

// userAction: locally while reconciling (or while nobody else reconciles
// yet), through the cluster when attached, refused otherwise.
func userAction(f Facts, open, attached bool, kro string, other bool) Action {
	switch {
	case open:
		return Action{Route: Local}
	case f.Observe:
		return Action{Refused, "kroscope runs read-only (--observe)"}
	case attached:
		return Action{Route: Cluster}
	case kro != "":
		return Action{Refused, "observing only (--attach=false) while kro may be reconciling this cluster"}
	case other:
		return Action{Refused, fmt.Sprintf("observing only (--attach=false) while %s holds the lease", f.Holder)}
	}
	return Action{Route: Local}
}

// editAction: an edit is the engine's own write, never forwarded.
func editAction(f Facts, open bool) Action {
	switch {
	case open:
		return Action{Route: Local}
	case f.Observe:
		return Action{Refused, "kroscope runs read-only (--observe)"}
	}
	return Action{Refused, fmt.Sprintf("observing while %s holds the lease", holderShown(f))}
}

func holderShown(f Facts) string {
	if f.NoLease && !f.Observe {
		return f.Identity
	}
	return f.Holder
}

func mode(f Facts, open, attached bool, kro string) state.Mode {
	m := state.Mode{Reconciling: open, Forced: f.Observe, Identity: f.Identity, Holder: holderShown(f), TakeOver: f.TakeOver,
		Kro: kro, Attached: attached, HolderExpired: f.Following && f.HolderExpired}
	if attached {
		m.RequeueNote = requeueNote(f.Holder, kro)
	}
	return m
}

// RequeueAnnotation carries the time of the last requeue asked for by an
// attached kroscope (the engine writes it).
const RequeueAnnotation = "kroscope.dev/requeue"

// KroRequeueNote is what a requeue does on a cluster where kro's controller
// reconciles, as measured against kro v0.9.4 (test/kro
// TestKroIgnoresRequeueAnnotation): kro's instance watch drops updates that
// leave the generation unchanged (except its reconcile-suspension
// annotation), so the annotation alone does not make kro reconcile.
const KroRequeueNote = "kro ignores metadata-only changes (v0.9.4 checked): the " + RequeueAnnotation +
	" annotation is written, but kro reconciles only on a spec change, a change to one of the instance's resources, or its resync (10h by default)"

func requeueNote(holder, kro string) string {
	switch {
	case kro != "":
		return KroRequeueNote
	case holder == "":
		return "wrote the " + RequeueAnnotation + " annotation for the lease holder (who it is, this user may not read)"
	}
	return "asked " + holder + " through the " + RequeueAnnotation + " annotation"
}

// Word is the mode in a few words, for the log.
func Word(m state.Mode) string {
	switch {
	case m.Forced:
		return "observe (--observe)"
	case m.Kro != "":
		return "observe (kro may be reconciling this cluster)"
	case m.Writer != "":
		return "observe (another kroscope writes these instances)"
	case m.Ask != "":
		return "observe (waiting for your yes to reconcile)"
	case m.Reconciling:
		return "reconcile"
	case m.Attached && m.Holder == "":
		return "attached (lease holder unknown)"
	case m.Attached:
		return "attached to " + m.Holder
	}
	return "observe (lease held elsewhere)"
}

// Authority holds the facts, under its own lock, and decides from them.
type Authority struct {
	mu sync.Mutex
	f  Facts
}

// New returns an Authority starting from f.
func New(f Facts) *Authority { return &Authority{f: f} }

// Update changes the facts and returns the decision before and after.
func (a *Authority) Update(change func(*Facts)) (before, after Decision) {
	a.mu.Lock()
	defer a.mu.Unlock()
	before = Decide(a.f)
	change(&a.f)
	return before, Decide(a.f)
}

// Facts returns the facts now.
func (a *Authority) Facts() Facts {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.f
}

// Decision returns the decision now.
func (a *Authority) Decision() Decision { return Decide(a.Facts()) }
