package krodetect

import (
	"fmt"
	"strings"
	"time"
)

// Sighting is one piece of evidence that kro's controller ran.
type Sighting struct {
	// What names it in messages ("lease kro-system/controller.kro.run
	// held by kro-1", "ResourceGraphDefinition web written by field
	// manager kro at ...").
	What string
	// At is when kro was last seen through it.
	At time.Time
	// Slack is how much later than At kro may really have acted: the
	// times in managedFields are whole seconds.
	Slack time.Duration
	// Live: it shows kro running now (a Lease held and not expired, a
	// Deployment with a ready replica), not only that it ran.
	Live bool
	// Source names the kro it is taken for ("lease ns/name",
	// "Deployment ns/name"); "" when no Lease or Deployment explains it
	// (a kro run without either).
	Source string
}

// Proof is positive evidence that kro's controller stopped.
type Proof struct {
	What string
	// At is the time from which kro is known to be absent: a Lease's
	// expiry, the first time a Deployment was seen scaled to zero or a
	// Lease or Deployment seen before was found gone, the start of a
	// silence in which kro left a change to a graph unanswered.
	At time.Time
	// Of names the kro it proves stopped (a Sighting's Source); "" proves
	// that no kro at all ran since At.
	Of string
}

// Facts is everything kroscope knows of kro's presence. Sightings and
// proofs are remembered, not dropped when the objects that showed them
// are deleted: a kro that went idle is still a kro.
type Facts struct {
	Sightings []Sighting
	Proofs    []Proof
	// TakeOver (--take-over) sets aside sightings from before Since (the
	// process start): the traces of a kro that was stopped.
	TakeOver bool
	Since    time.Time
}

// Presence is the verdict's kind.
type Presence int

const (
	// NeverSeen: no sign that kro ever ran here; kroscope may write.
	NeverSeen Presence = iota
	// Absent: kro was seen, and a proof of its absence is newer than
	// every sighting; kroscope may write.
	Absent
	// TakenOver: kro was seen only before this process started with
	// --take-over, and not proven absent; kroscope may write.
	TakenOver
	// Present: kro runs now (a live sighting); kroscope only observes.
	Present
	// Unproven: kro was seen and its absence is not proven (a kro run
	// without leader election and without a Deployment leaves no sign
	// while idle); kroscope only observes.
	Unproven
)

// Verdict is what Decide concludes, with the evidence that decided it.
type Verdict struct {
	Presence Presence
	// Reason is the deciding sighting or proof ("" for NeverSeen).
	Reason string
	// SinceStart: an Unproven verdict rests on a sighting made while this
	// process ran, which --take-over does not set aside.
	SinceStart bool
}

// MayWrite reports whether kroscope may write beside kro.
func (v Verdict) MayWrite() bool { return v.Presence <= TakenOver }

// Decide is the one place that decides whether kro's controller may be
// reconciling the cluster. A live sighting wins. Otherwise every sighting
// (but, with --take-over, those from before Since) must be covered by a
// proof made after it (with its slack) that stops the kro it is taken
// for: no longer seeing kro is never taken for its absence.
func Decide(f Facts) Verdict {
	for _, s := range f.Sightings {
		if s.Live {
			return Verdict{Presence: Present, Reason: s.What}
		}
	}
	var open *Sighting // the newest sighting no proof covers
	var proof *Proof   // the newest proof that covers one
	counted, setAside := 0, ""
	for i := range f.Sightings {
		s := &f.Sightings[i]
		if f.TakeOver && !s.At.After(f.Since) {
			setAside = s.What
			continue
		}
		counted++
		if p := covering(f.Proofs, s); p != nil {
			if proof == nil || p.At.After(proof.At) {
				proof = p
			}
		} else if open == nil || s.At.Add(s.Slack).After(open.At.Add(open.Slack)) {
			open = s
		}
	}
	switch {
	case open != nil:
		return Verdict{Presence: Unproven, Reason: open.What, SinceStart: open.At.After(f.Since)}
	case counted > 0:
		return Verdict{Presence: Absent, Reason: proof.What}
	case setAside != "":
		return Verdict{Presence: TakenOver, Reason: setAside}
	}
	return Verdict{Presence: NeverSeen}
}

// covering returns a proof that the kro s is taken for stopped after s.
func covering(proofs []Proof, s *Sighting) *Proof {
	for i := range proofs {
		p := &proofs[i]
		if (p.Of == "" || p.Of == s.Source) && p.At.After(s.At.Add(s.Slack)) {
			return p
		}
	}
	return nil
}

// Line is the one line the header and the log show for a verdict that
// keeps kroscope from writing ("" when it may write).
func (v Verdict) Line(takeOver bool) string {
	reason := strings.TrimSpace(v.Reason)
	switch {
	case v.MayWrite():
		return ""
	case v.Presence == Present:
		return Headline(reason, takeOver)
	case takeOver || v.SinceStart:
		return fmt.Sprintf("kro was seen on this cluster while kroscope ran (%s) and is not proven gone: observing; "+
			"restart kroscope with --take-over once kro is stopped", reason)
	}
	return fmt.Sprintf("kro was seen on this cluster (%s) and is not proven gone: observing; --take-over to reconcile", reason)
}

// Changed is the log line for a change of verdict to one that lets
// kroscope write ("" otherwise).
func (v Verdict) Changed() string {
	switch v.Presence {
	case Absent:
		return fmt.Sprintf("kro's controller is proven gone (%s): kroscope may reconcile", v.Reason)
	case TakenOver:
		return fmt.Sprintf("kro was seen only before kroscope started (%s): --take-over, kroscope may reconcile", v.Reason)
	case NeverSeen:
		return "kro's controller was never seen on this cluster: kroscope may reconcile"
	}
	return ""
}
