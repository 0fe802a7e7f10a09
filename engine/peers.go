package engine

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kroscope/kroscope/engine/authority"
	"github.com/kroscope/kroscope/engine/lease"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/engine/tick"
	"github.com/kroscope/kroscope/reconciler/client"
)

// peers gathers the write authority's facts about other kroscopes: the
// holder of this kroscope's Lease when it is followed (CampaignIfFree),
// and every kroscope Lease, for another kroscope that writes the same
// instances under another Lease (authority.OtherWriter).
type peers struct {
	facts authorityFacts
	// others follows every kroscope Lease (followOtherWriters).
	others atomic.Pointer[lease.Others]
	o      Options
	base   *client.Set // the caller's own connection: Leases are read as the user
	store  *state.Store
	log    logr.Logger
}

// decideCampaign: with CampaignIfFree, a Lease held by another live
// kroscope is followed for the rest of the run, never campaigned for.
func (p *peers) decideCampaign(ctx context.Context) {
	if !p.o.CampaignIfFree || !p.facts.decision().UsesLease {
		return
	}
	kube := p.base.Kubernetes()
	free, h, err := lease.Free(ctx, kube, p.o.LeaseNamespace, p.o.LeaseName, p.o.Identity, time.Now())
	if err != nil {
		p.log.Error(err, "cannot read the lease; campaigning for it")
		return
	}
	if free {
		return
	}
	p.facts.update(func(f *authority.Facts) { f.Following, f.Holder = true, h.Identity })
	p.log.Info("another kroscope holds the lease: not campaigning (--take-lease would)", "lease", p.o.leaseName(), "holder", h.Identity, "attach", p.o.Attach)
	go lease.Follow(ctx, kube, p.o.LeaseNamespace, p.o.LeaseName, p.log, p.setFollowed)
}

// setFollowed records the followed Lease's holder.
func (p *peers) setFollowed(h lease.Holder) {
	moved := false
	p.facts.update(func(f *authority.Facts) {
		moved = f.Holder != h.Identity
		f.Holder, f.HolderExpired = h.Identity, h.Expired
	})
	if moved {
		p.log.Info("the lease moved", "holder", h.Identity)
	} else if h.Expired {
		p.log.Info("the lease holder stopped renewing it", "holder", h.Identity)
	}
}

// followOtherWriters watches every kroscope Lease, so that this kroscope
// observes while another one, under another Lease, writes the same
// instances (authority.OtherWriter). One that cannot list them cannot
// prove it is the only writer, and observes, saying why.
func (p *peers) followOtherWriters(ctx context.Context) {
	if !p.facts.decision().UsesLease {
		return
	}
	p.facts.update(func(f *authority.Facts) { f.Consent.User = p.store.Snapshot().Capabilities.User })
	if p.listOtherWriters(ctx) || p.o.AccessRecheck < 0 {
		return
	}
	// Asked again with the kinds' access: a grant made later (list and
	// watch on Leases) lets this kroscope write without a restart.
	go tick.Every(ctx, p.o.AccessRecheck, nil, func() bool {
		if !p.listOtherWriters(ctx) {
			return false
		}
		p.log.Info("kroscope's Leases can be listed now: another kroscope writing these instances would be seen")
		return true
	})
}

// listOtherWriters starts following the kroscope Leases and reports
// whether it could; when not, the facts say why.
func (p *peers) listOtherWriters(ctx context.Context) bool {
	others, err := lease.ListOthers(ctx, p.base.Kubernetes(), p.log, func() { p.setOtherWriters(nil) })
	if err != nil {
		why := err.Error()
		if apierrors.IsForbidden(err) {
			why = "this user may not list Leases in all namespaces"
		}
		was := p.facts.facts().Writers.Unknown
		p.facts.update(func(f *authority.Facts) { f.Writers.Unknown = why })
		if was != why {
			p.log.Info("cannot tell whether another kroscope writes these instances: observing", "why", why)
		}
		return false
	}
	p.others.Store(others)
	p.facts.update(func(f *authority.Facts) { f.Writers.Unknown = "" })
	p.setOtherWriters(others)
	return true
}

// setOtherWriters records the kroscope Leases seen (others nil: the ones
// followed) and logs a change of the other writer.
func (p *peers) setOtherWriters(others *lease.Others) {
	if others == nil {
		if others = p.others.Load(); others == nil {
			return // the first list is recorded by followOtherWriters
		}
	}
	seen := others.Writers()
	var was, now string
	p.facts.update(func(f *authority.Facts) {
		was = authority.Decide(*f).Mode.Writer
		f.Writers.Seen = seen
		now = authority.Decide(*f).Mode.Writer
	})
	switch {
	case now == was:
	case now != "":
		p.log.Info(now)
	default:
		p.log.Info("no other kroscope writes these instances now", "was", was)
	}
}
