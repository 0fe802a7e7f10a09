package engine

import (
	"fmt"
	"net/http"
	"sync/atomic"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"

	"github.com/kroscope/kroscope/engine/metrics"
	"github.com/kroscope/kroscope/engine/readonly"
	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/graph"
)

// clients are the engine's connections to the API server, set once by New:
// every group is handed the one it uses at construction.
type clients struct {
	set  *client.Set // writes go through the write gate
	base *client.Set // the caller's set, for the Lease and access reviews
	// schemas types every graph's resources from the API server's
	// OpenAPI, shared so graphs over the same kinds fetch it once.
	schemas *graph.CachedSchemaResolver
	// apiErrors counts the set's failed requests.
	apiErrors atomic.Int64
}

// newClients wraps base: its writes pass gate, its failed requests are
// counted, and note hears every response.
func newClients(base *client.Set, gate *readonly.Gate, note callNote) (*clients, error) {
	c := &clients{base: base}
	set, err := gatedSet(base, gate, &c.apiErrors, note)
	if err != nil {
		return nil, err
	}
	c.set = set
	c.schemas = graph.NewCachedSchemaResolver(set.Discovery(), 0)
	return c, nil
}

// gated is the set reconciles and the user's actions write through.
func (c *clients) gated() *client.Set { return c.set }

// own is the caller's set: the Lease, access reviews and plans' dry runs
// never pass the gate.
func (c *clients) own() *client.Set { return c.base }

// schemaResolver is the shared OpenAPI schema cache.
func (c *clients) schemaResolver() *graph.CachedSchemaResolver { return c.schemas }

// failed counts the failed requests so far.
func (c *clients) failed() int64 { return c.apiErrors.Load() }

// gatedSet returns a client set whose writes pass through gate, which
// answers its MayWrite (so the reconciler observes while it is closed), and
// whose failed requests are counted.
func gatedSet(s *client.Set, gate *readonly.Gate, apiErrors *atomic.Int64, note callNote) (*client.Set, error) {
	cfg := s.Config()
	if cfg == nil {
		// An in-memory set (the demo): wrap the clients themselves.
		out := client.NewSetFromClients(client.Clients{
			Dynamic:    readonly.Dynamic(s.Dynamic(), gate),
			Metadata:   readonly.Metadata(s.Metadata(), gate),
			Kubernetes: s.Kubernetes(),
			Discovery:  s.Discovery(),
			Mapper:     s.RESTMapper(),
			Impersonate: func(user string) (*client.Set, error) {
				inner, err := s.WithImpersonation(user)
				if err != nil {
					return nil, err
				}
				return gatedSet(inner, gate, apiErrors, note)
			},
		})
		out.GateWrites(gate.Open)
		return out, nil
	}
	cfg = readonly.WrapConfig(cfg, gate)
	cfg.Wrap(transport.WrapperFunc(func(rt http.RoundTripper) http.RoundTripper {
		return &errorCounter{next: rt, n: apiErrors, note: note}
	}))
	out, err := client.NewSet(cfg)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	out.GateWrites(gate.Open) // the reconciler asks the gate whether it observes
	return out, nil
}

// unthrottled returns base, or base rebuilt without client-go's default
// client-side limit (5 requests a second) when its config sets no limit
// of its own. Every set the engine builds comes from it: the Lease, the
// access reviews (a graph's first check asks one per kind and verb, and
// waited seconds on that limit at every start) and every reconcile. The
// API server's priority and fairness is the limit that counts.
func unthrottled(base *client.Set) (*client.Set, error) {
	cfg := base.Config()
	if cfg == nil || !Unthrottle(cfg) {
		return base, nil
	}
	return client.NewSet(cfg)
}

// Unthrottle lifts client-go's default limit from cfg when cfg sets no
// limit of its own, and reports whether it did: the one decision every
// connection kroscope makes (the engine's, plan's) asks.
func Unthrottle(cfg *rest.Config) bool {
	if cfg.QPS != 0 || cfg.RateLimiter != nil {
		return false
	}
	cfg.QPS = DefaultClientQPS
	return true
}

// callNote hears every API response (or transport error), to log the
// failed ones of an instance.
type callNote func(*http.Request, *http.Response, error)

// errorCounter counts API requests that failed (transport error, 429, 5xx)
// and tells note about each call.
type errorCounter struct {
	next http.RoundTripper
	n    *atomic.Int64
	note callNote
}

func (c *errorCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if c.note != nil {
		c.note(req, resp, err)
	}
	if apiFailure(req, resp, err) {
		c.n.Add(1)
		metrics.APIErrors.Inc()
	}
	return resp, err
}
