// Package client holds the set of Kubernetes clients the reconciler and the
// engine share, with cached impersonating copies.
package client

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Set is a group of clients for one identity.
type Set struct {
	config    *rest.Config
	dynamic   dynamic.Interface
	metadata  metadata.Interface
	kube      kubernetes.Interface
	discovery discovery.CachedDiscoveryInterface
	mapper    meta.ResettableRESTMapper

	// impersonate builds a Set for another user; nil means derive one from
	// config.
	impersonate func(user string) (*Set, error)
	user        string
	// mayWrite is the write gate's question (see GateWrites).
	mayWrite atomic.Pointer[func() bool]

	mu    sync.Mutex
	cache map[string]*Set // impersonated sets by user name
}

// NewSet builds every client from a rest.Config.
func NewSet(cfg *rest.Config) (*Set, error) {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("building HTTP client: %w", err)
	}
	return newSetForHTTP(cfg, httpClient)
}

func newSetForHTTP(cfg *rest.Config, hc *http.Client) (*Set, error) {
	dyn, err := newDynamic(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("building dynamic client: %w", err)
	}
	md, err := metadata.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("building metadata client: %w", err)
	}
	kube, err := kubernetes.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("building clientset: %w", err)
	}
	disc := memory.NewMemCacheClient(kube.Discovery())
	return &Set{
		config:    rest.CopyConfig(cfg),
		dynamic:   dyn,
		metadata:  md,
		kube:      kube,
		discovery: disc,
		mapper:    memoize(restmapper.NewDeferredDiscoveryRESTMapper(disc)),
		cache:     map[string]*Set{},
	}, nil
}

// Clients are ready-made clients for NewSetFromClients (the demo cluster and
// unit tests use it).
type Clients struct {
	Dynamic    dynamic.Interface
	Metadata   metadata.Interface
	Kubernetes kubernetes.Interface
	Discovery  discovery.CachedDiscoveryInterface
	Mapper     meta.ResettableRESTMapper
	// Impersonate returns the clients acting as user; nil means
	// impersonation fails with an error.
	Impersonate func(user string) (*Set, error)
}

// NewSetFromClients wraps existing clients.
func NewSetFromClients(c Clients) *Set {
	return &Set{
		dynamic:     c.Dynamic,
		metadata:    c.Metadata,
		kube:        c.Kubernetes,
		discovery:   c.Discovery,
		mapper:      memoize(c.Mapper),
		impersonate: c.Impersonate,
		cache:       map[string]*Set{},
	}
}

// Config returns a copy of the rest.Config, or nil for a Set built from clients.
func (s *Set) Config() *rest.Config {
	if s.config == nil {
		return nil
	}
	return rest.CopyConfig(s.config)
}

// Dynamic returns the dynamic client.
func (s *Set) Dynamic() dynamic.Interface { return s.dynamic }

// Metadata returns the metadata-only client.
func (s *Set) Metadata() metadata.Interface { return s.metadata }

// Kubernetes returns the typed clientset (may be nil for a Set built from clients).
func (s *Set) Kubernetes() kubernetes.Interface { return s.kube }

// Discovery returns the cached discovery client (may be nil).
func (s *Set) Discovery() discovery.CachedDiscoveryInterface { return s.discovery }

// RESTMapper maps kinds to resources; Reset it when new kinds appear.
func (s *Set) RESTMapper() meta.ResettableRESTMapper { return s.mapper }

// GateWrites makes MayWrite ask open: the caller that gates this Set's
// writes (the engine's readonly.Gate) answers whether they may happen now.
func (s *Set) GateWrites(open func() bool) { s.mayWrite.Store(&open) }

// MayWrite reports whether this Set's writes may happen now: true unless
// GateWrites attached a gate that is closed. The reconciler asks it once
// per reconcile, so a closed gate means observing, not failing writes.
func (s *Set) MayWrite() bool {
	open := s.mayWrite.Load()
	return open == nil || (*open)()
}

// User is the impersonated user name, "" for the Set's own identity.
func (s *Set) User() string { return s.user }

// WithImpersonation returns a Set acting as user. Sets are cached per user,
// so repeated reconciles reuse one client and its connections.
func (s *Set) WithImpersonation(user string) (*Set, error) {
	if user == "" {
		return nil, fmt.Errorf("impersonation needs a user name")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.cache[user]; ok {
		return c, nil
	}
	var (
		out *Set
		err error
	)
	switch {
	case s.impersonate != nil:
		out, err = s.impersonate(user)
	case s.config != nil:
		cfg := rest.CopyConfig(s.config)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
		out, err = NewSet(cfg)
		if err == nil {
			// Kinds are the same whoever asks: share the mapper.
			out.mapper = s.mapper
			out.discovery = s.discovery
		}
	default:
		err = fmt.Errorf("impersonation is not supported by this client set")
	}
	if err != nil {
		return nil, err
	}
	out.user = user
	if open := s.mayWrite.Load(); open != nil && out.mayWrite.Load() == nil {
		out.mayWrite.Store(open) // acting as another user passes the same gate
	}
	s.cache[user] = out
	return out, nil
}
