package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kroscope/kroscope/engine/authority"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/engine/tick"
	"github.com/kroscope/kroscope/reconciler/client"
)

// access decides what this user may do: it asks the API server
// (SelfSubjectAccessReviews) about each served kind and the Lease, records
// the answers in the state (the TUI disables what is denied and says why)
// and asks again when they may have changed.
type access struct {
	o      Options
	base   *client.Set // the caller's own connection: reviews are the user's
	store  *state.Store
	log    logr.Logger
	served func() []*served // the graphs served now
	// lease is the writer: whether the Lease is used and followed, and
	// the fact that this user may not take it.
	lease authorityFacts
}

// What each capability needs of an instance kind, in the namespace shown:
// observing lists and watches, requeue touches the instance (patches the
// requeue annotation), delete deletes, edit updates its spec.
var (
	observeVerbs = []string{"list", "watch"}
	requeueVerbs = []string{"patch"}
	deleteVerbs  = []string{"delete"}
	editVerbs    = []string{"update", "patch"}
)

// check asks the API server (SelfSubjectAccessReviews, which every
// authenticated user may create) what this user may do with gvr's
// instances in the namespace shown (all namespaces without -n), and
// records it in the state: the TUI disables what is denied and says why,
// and Delete and edits refuse it before any call. Without a real cluster
// (the demo) nothing is checked and everything counts as allowed; a check
// that fails leaves the kind unchecked (the API server still refuses what
// it must).
func (a *access) check(ctx context.Context, gvr schema.GroupVersionResource, namespaced bool) {
	if !a.cluster() {
		return
	}
	a.user(ctx)
	kube := a.base.Kubernetes()
	resource := resourceName(gvr)
	ns := a.o.Namespace
	if !namespaced {
		ns = "" // a cluster-scoped kind has no namespace to narrow to
	}
	cache := map[string]state.Permission{}
	ask := func(verbs []string) (state.Permission, error) {
		for _, verb := range verbs {
			p, ok := cache[verb]
			if !ok {
				r, err := kube.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
					Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
						Namespace: ns, Verb: verb, Group: gvr.Group, Version: gvr.Version, Resource: gvr.Resource,
					}},
				}, metav1.CreateOptions{})
				if err != nil {
					return state.Permission{}, err
				}
				p = state.Permission{Allowed: r.Status.Allowed && !r.Status.Denied}
				if !p.Allowed {
					p.Why = deniedWhy(a.store.Snapshot().Capabilities.User, verb, resource, ns, r.Status.Reason)
				}
				cache[verb] = p
			}
			if !p.Allowed {
				return p, nil
			}
		}
		return state.Permission{Allowed: true}, nil
	}
	prev, checked := a.store.CheckedAccess(resource)
	k := state.KindAccess{Resource: resource, Namespace: ns}
	for _, c := range []struct {
		p     *state.Permission
		verbs []string
	}{{&k.Observe, observeVerbs}, {&k.Requeue, requeueVerbs}, {&k.Delete, deleteVerbs}, {&k.Edit, editVerbs}} {
		p, err := ask(c.verbs)
		if err != nil {
			if ctx.Err() == nil {
				a.log.Error(err, "cannot check this user's access (SelfSubjectAccessReview); keys stay enabled", "resource", resource)
			}
			return
		}
		*c.p = p
	}
	a.store.SetAccess(k)
	// Said when first known and when it changes, not at every re-check.
	if checked && prev == k {
		return
	}
	what := ": "
	if checked {
		what = " changed: "
	}
	a.log.Info("access to "+resource+" in "+nsWord(ns)+what+state.Capabilities{Kinds: []state.KindAccess{k}}.Summary(),
		"user", a.store.Snapshot().Capabilities.User)
}

// DefaultAccessRecheck is how often kinds with a denied permission are
// asked again: a Role granted while kroscope runs enables its keys within
// this time, without a restart. Kinds with nothing denied are not asked
// again (a normal admin's kroscope sends no reviews after start): what was
// revoked the API server refuses, and that refusal re-checks the kind at
// once (recheckAfterForbidden).
const DefaultAccessRecheck = 30 * time.Second

// recheckDenied re-checks, every AccessRecheck, each served kind this
// user was denied something on, and a denied Lease.
func (a *access) recheckDenied(ctx context.Context) {
	if a.o.AccessRecheck < 0 || !a.cluster() {
		return
	}
	tick.Every(ctx, a.o.AccessRecheck, nil, func() bool {
		for _, s := range a.served() {
			if k, ok := a.store.CheckedAccess(s.resource); ok && k.Denies() {
				a.check(ctx, s.gvr, s.graph.Instance.Namespaced)
			}
		}
		a.recheckLease(ctx)
		return false
	})
}

// cluster: there is a real cluster to ask (not the demo's in-memory one).
func (a *access) cluster() bool { return a.base.Config() != nil && a.base.Kubernetes() != nil }

// recheckAfterForbidden re-checks s's kind, in the background, when the
// API server refused one of the user's actions on it: the permission the
// capabilities promised was revoked, and the keys should say so now.
// It outlives the action (ctx's values, not its end), bounded by
// accessRecheckTimeout.
func (a *access) recheckAfterForbidden(ctx context.Context, s *served, err error) {
	if !apierrors.IsForbidden(err) {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), accessRecheckTimeout)
		defer cancel()
		a.check(ctx, s.gvr, s.graph.Instance.Namespaced)
	}()
}

// accessRecheckTimeout bounds a re-check after a refusal.
const accessRecheckTimeout = 30 * time.Second

// user records who this user is (SelfSubjectReview), once; a server
// that cannot say leaves it blank.
func (a *access) user(ctx context.Context) {
	if a.store.Snapshot().Capabilities.User != "" {
		return
	}
	r, err := a.base.Kubernetes().AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err == nil && r.Status.UserInfo.Username != "" {
		a.store.SetAccessUser(r.Status.UserInfo.Username)
	}
}

// userName is who this user is, as recorded ("" before user, or when the
// server cannot say).
func (a *access) userName() string { return a.store.Snapshot().Capabilities.User }

// deniedWhy is the reason a key shows disabled: "user jane may not delete
// webapps.kro.run in team-a".
func deniedWhy(user, verb, resource, ns, reason string) string {
	who := "this user"
	if user != "" {
		who = "user " + user
	}
	s := fmt.Sprintf("%s may not %s %s in %s", who, verb, resource, nsWord(ns))
	if reason = strings.TrimSpace(reason); reason != "" {
		s += " (" + reason + ")"
	}
	return s
}

func nsWord(ns string) string {
	if ns == "" {
		return "all namespaces"
	}
	return ns
}

// recheckAll checks every served kind again (a watch that was
// forbidden works now: permissions changed).
func (a *access) recheckAll(ctx context.Context) {
	for _, s := range a.served() {
		a.check(ctx, s.gvr, s.graph.Instance.Namespaced)
	}
}

// refuse returns the error of an action the user may not do, or nil.
func (a *access) refuse(what string, key state.InstanceKey, p func(state.KindAccess) state.Permission) error {
	if perm := p(a.store.Access(key.Resource)); !perm.Allowed {
		return fmt.Errorf("not %s %s: %s", what, key, perm.Why)
	}
	return nil
}

// noteWatch says, once each, that a watch is forbidden and that it works
// again (then the kinds' capabilities are checked again: permissions
// changed).
func (a *access) noteWatch(ctx context.Context, w state.Watch, granted bool) {
	if granted {
		a.log.Info("access granted: watching "+w.NoAccess(), "watch", w.Name)
		go a.recheckAll(ctx)
		return
	}
	a.log.Info("no access: "+w.NoAccess()+" (forbidden; retried quietly in the background)", "watch", w.Name, "error", w.Err)
}

// checkLease asks, before campaigning, whether this user may take
// the Lease (get, create, update it). One who may not (a Role in another
// namespace) would otherwise retry the election every few seconds for
// ever: it observes instead, said once in the log and on the header, and
// the Lease is asked about again with the kinds (recheckLease).
func (a *access) checkLease(ctx context.Context) {
	if !a.lease.decision().UsesLease || a.base.Config() == nil {
		return
	}
	a.user(ctx)
	why, checked := a.leaseDenied(ctx)
	if !checked || why == "" {
		return // not checked: the election says what it meets
	}
	a.setLeaseDenied(why)
	a.log.Info("not taking the lease: "+why+"; observing (a Lease in a namespace you may write, --lease-namespace, lets you reconcile there)",
		"lease", a.o.leaseName())
}

// leaseDenied says why this user may not take the Lease ("" when it
// may); checked is false when the API server could not say.
func (a *access) leaseDenied(ctx context.Context) (why string, checked bool) {
	verbs := []string{"get", "update"}
	// create only when the Lease is not there (deploy/ creates it, and
	// grants no create on Leases); a followed Lease is there.
	if !a.lease.facts().Following {
		if _, err := a.base.Kubernetes().CoordinationV1().Leases(a.o.LeaseNamespace).Get(ctx, a.o.LeaseName, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			verbs = append(verbs, "create")
		}
	}
	for _, verb := range verbs {
		r, err := a.base.Kubernetes().AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: a.o.LeaseNamespace, Verb: verb, Group: "coordination.k8s.io", Resource: "leases", Name: a.o.LeaseName,
			}},
		}, metav1.CreateOptions{})
		if err != nil {
			return "", false
		}
		if r.Status.Allowed && !r.Status.Denied {
			continue
		}
		why := deniedWhy(a.store.Snapshot().Capabilities.User, verb, "the lease "+a.o.leaseName(), "", "")
		return strings.TrimSuffix(why, " in all namespaces"), true
	}
	return "", true
}

// recheckLease asks again about a Lease this user was denied: once
// granted (a Role applied after kroscope started, as happens when the
// Deployment and its RBAC are applied together), the engine campaigns as
// it would have at start, instead of observing until restarted.
func (a *access) recheckLease(ctx context.Context) {
	denied := a.lease.facts().LeaseDenied
	if denied == "" {
		return
	}
	why, checked := a.leaseDenied(ctx)
	if !checked || why == denied {
		return
	}
	a.setLeaseDenied(why)
	if why != "" {
		return // denied still, for another verb
	}
	a.log.Info("lease access granted: campaigning", "lease", a.o.leaseName())
}

// setLeaseDenied records why this user may not take the Lease ("" once
// it may): the engine's campaign decision, the header and the mode.
func (a *access) setLeaseDenied(why string) {
	a.store.SetLeaseDenied(why)
	a.lease.update(func(f *authority.Facts) { f.LeaseDenied = why })
}
