package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kroscope/kroscope/engine/rgdstatus"
	"github.com/kroscope/kroscope/engine/rights"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/confine"
	"github.com/kroscope/kroscope/reconciler/graph"
)

// RefusedError is a graph kroscope does not serve because of what it would
// write: a sensitive kind, a cluster-scoped child of namespaced instances
// (confine.Decide), or a rule kroscope's identity lacks (CheckRights).
type RefusedError struct{ Why string }

func (e *RefusedError) Error() string { return "not served: " + e.Why }

// GraphRefusal is what confine.Decide says of g before any instance
// exists: the first resource it refuses, nil when it refuses none. The
// reconciler asks again, with the rendered namespace, before each write.
func GraphRefusal(g *graph.Graph, grant confine.Grant) error {
	for _, id := range g.TopologicalOrder {
		res := g.Resources[id]
		v := confine.Decide(confine.Facts{
			Kind: res.GVK.GroupKind(), External: res.External || res.ExternalCollection, Namespaced: res.Namespaced,
			InstanceNamespaced: g.Instance.Namespaced, LiteralNamespace: !reconciler.NamespaceComputed(res), Grant: grant,
		})
		if !v.Allowed {
			return &RefusedError{Why: "resource " + id + ": " + v.Why}
		}
	}
	return nil
}

// admit holds a graph back until it may be served: refused for good when
// confine.Decide refuses one of its resources; while kroscope's identity
// lacks a rule it needs (CheckRights), shown as not served, naming the
// rule, and asked again with a backoff. False when the graph is not
// served (ctx done).
func (gr *graphStart) admit(ctx context.Context, g *graph.Graph) bool {
	r := gr.r
	if err := GraphRefusal(g, r.grant); err != nil {
		gr.fail(err, "not serving the graph")
		gr.setOutcome(ctx, func(o *rgdstatus.Outcome) { o.ServeErr = err })
		r.markReady() // refused until the graph changes: startup goes on
		<-ctx.Done()
		return false
	}
	if !gr.rights.checks() {
		return true
	}
	last := ""
	for backoff := 5 * time.Second; ; backoff = min(backoff*2, 2*time.Minute) {
		err := gr.rights.missing(ctx, g)
		if err == nil {
			if last != "" {
				gr.log.Info("rights granted: serving the graph")
			}
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		var refused *RefusedError
		if !errors.As(err, &refused) {
			// The API server could not say: serve, and let it refuse.
			gr.log.Error(err, "cannot check kroscope's rights (SelfSubjectAccessReview); serving the graph")
			return true
		}
		if err.Error() != last {
			gr.fail(err, "not serving the graph until kroscope is granted the rule")
			gr.setOutcome(ctx, func(o *rgdstatus.Outcome) { o.ServeErr = err })
			last = err.Error()
		}
		r.markReady() // startup does not wait for rights not granted
		select {
		case <-ctx.Done():
			return false
		case <-time.After(backoff):
		}
	}
}

// rightsCache remembers the API server's answers for a while: graphs share
// kinds (ConfigMaps, Deployments), and a cluster's worth of graphs would
// otherwise ask the same questions at every start.
type rightsCache struct {
	mu      sync.Mutex
	answers map[authorizationv1.ResourceAttributes]rightsAnswer

	base      *client.Set // kroscope's own identity asks
	namespace string      // Options.Namespace
	enabled   bool        // Options.CheckRights
	// askUser has access record who this identity is (once); user is the
	// name recorded, for a refusal.
	askUser func(context.Context)
	user    func() string
}

// checks: rights are checked (CheckRights, and a cluster to ask).
func (c *rightsCache) checks() bool { return c.enabled && c.base.Kubernetes() != nil }

type rightsAnswer struct {
	allowed bool
	at      time.Time
}

// rightsTTL is how long an answer is reused.
const rightsTTL = 30 * time.Second

// missing names the first rule serving g takes that this identity lacks
// (a RefusedError), nil when it has them all.
func (c *rightsCache) missing(ctx context.Context, g *graph.Graph) error {
	for _, n := range rights.ForGraph(g) {
		ns := ""
		if n.Namespaced {
			ns = c.namespace
		}
		for _, verb := range n.Verbs {
			res, sub, _ := strings.Cut(n.GVR.Resource, "/")
			attr := authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: n.GVR.Group, Version: n.GVR.Version, Resource: res, Subresource: sub, Name: n.Name}
			ok, err := c.allowed(ctx, attr)
			if err != nil {
				return err
			}
			if !ok {
				user := c.user()
				return &RefusedError{Why: fmt.Sprintf("%s (%s) needs the rule {apiGroups: [%q], resources: [%s], verbs: [%s]}: %s (`kroscope rbac` prints every rule this graph needs)",
					n.Why, n.GVR.GroupResource(), n.GVR.Group, n.GVR.Resource, verb, deniedWhy(user, verb, n.GVR.GroupResource().String(), ns, ""))}
			}
		}
	}
	return nil
}

func (c *rightsCache) allowed(ctx context.Context, attr authorizationv1.ResourceAttributes) (bool, error) {
	c.mu.Lock()
	a, ok := c.answers[attr]
	c.mu.Unlock()
	if ok && time.Since(a.at) < rightsTTL {
		return a.allowed, nil
	}
	c.askUser(ctx)
	r, err := c.base.Kubernetes().AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &attr},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	allowed := r.Status.Allowed && !r.Status.Denied
	c.mu.Lock()
	if c.answers == nil {
		c.answers = map[authorizationv1.ResourceAttributes]rightsAnswer{}
	}
	c.answers[attr] = rightsAnswer{allowed: allowed, at: time.Now()}
	c.mu.Unlock()
	return allowed, nil
}
