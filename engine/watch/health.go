// Package watch runs the engine's informers: it reports every informer's
// health (a broken watch is a first-class state), and shares metadata-only
// informers on child and external kinds between graphs, reference-counted
// and stopped when the last user releases them.
package watch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"

	"github.com/kroscope/kroscope/engine/metrics"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/engine/tick"
)

// Health receives watch health; *state.Store implements it.
type Health interface {
	SetWatch(state.Watch)
	RemoveWatch(name string)
}

// Group is the informers of one engine. Besides each informer's own watch
// errors (a failed list: forbidden, unknown kind...), it probes the API
// server, because client-go retries a refused watch connection silently:
// an unreachable server would otherwise never show as a broken watch.
type Group struct {
	health Health

	mu          sync.Mutex
	monitors    map[*Monitor]bool
	unreachable bool
	access      func(w state.Watch, granted bool)
}

// OnAccess sets f to hear, once each time, that a watch became forbidden
// (granted false) and that it works again (granted true); set it before
// any informer runs. A forbidden list is retried by the informer with its
// backoff, quietly: f is how it is said, once per kind and namespace.
func (g *Group) OnAccess(f func(w state.Watch, granted bool)) { g.access = f }

// NewGroup returns a group reporting to h.
func NewGroup(h Health) *Group { return &Group{health: h, monitors: map[*Monitor]bool{}} }

// Monitor tracks one informer's health under a display name. Create it with
// Group.Monitored before the informer runs.
type Monitor struct {
	name string
	// resource and namespace are what the informer lists, for the note
	// of a forbidden watch.
	resource, namespace string
	inf                 cache.SharedIndexInformer
	health              Health
	group               *Group

	mu      sync.Mutex
	healthy bool
	// forbidden: the last failure was a 403; said once until the watch
	// works again.
	forbidden bool
	errRV     string // LastSyncResourceVersion when the watch broke
	events    atomic.Int64
	errEv     int64 // events count when the watch broke
}

// Monitored installs a watch error handler on inf (which must not be running
// yet) and reports its health under name.
func (g *Group) Monitored(inf cache.SharedIndexInformer, name string) *Monitor {
	return g.MonitoredScope(inf, name, name, "")
}

// MonitoredScope is Monitored for an informer of resource ("plural.group")
// in namespace ("" all): a forbidden list is reported as no access to
// resource in namespace.
func (g *Group) MonitoredScope(inf cache.SharedIndexInformer, name, resource, namespace string) *Monitor {
	m := &Monitor{name: name, resource: resource, namespace: namespace, inf: inf, health: g.health, group: g, healthy: true}
	_ = inf.SetWatchErrorHandler(func(_ *cache.Reflector, err error) { m.failed(err) })
	g.health.SetWatch(m.watch(false, true, ""))
	return m
}

// watch is the state of this watch.
func (m *Monitor) watch(synced, healthy bool, err string) state.Watch {
	return state.Watch{Name: m.name, Synced: synced, Healthy: healthy, Err: err, Resource: m.resource, Namespace: m.namespace}
}

// Probe checks the API server every interval with probe until ctx is done.
// While it fails every watch is reported broken with the probe's error;
// when it succeeds again they are reported healthy and onRecover runs.
func (g *Group) Probe(ctx context.Context, interval time.Duration, probe func(context.Context) error, onRecover func()) {
	tick.Every(ctx, interval, nil, func() bool {
		pctx, cancel := context.WithTimeout(ctx, interval)
		err := probe(pctx)
		cancel()
		if ctx.Err() != nil {
			return true
		}
		g.report(err, onRecover)
		return false
	})
}

// report marks every watch failed while the API server does not answer
// (err), and healthy again once it does, then runs onRecover.
func (g *Group) report(err error, onRecover func()) {
	g.mu.Lock()
	was := g.unreachable
	g.unreachable = err != nil
	ms := make([]*Monitor, 0, len(g.monitors))
	for m := range g.monitors {
		ms = append(ms, m)
	}
	g.mu.Unlock()
	switch {
	case err != nil:
		for _, m := range ms {
			m.markFailed(fmt.Errorf("API server unreachable: %w", err))
		}
	case was:
		for _, m := range ms {
			m.markHealthy()
		}
		if onRecover != nil {
			onRecover()
		}
	}
}

// Event records that the informer delivered an event (a sign of health).
func (m *Monitor) Event(kind string) {
	m.events.Add(1)
	metrics.WatchEvents.WithLabelValues(m.name, kind).Inc()
}

func (m *Monitor) failed(err error) {
	// An expired resource version or a closed stream is routine: the
	// reflector relists or rewatches at once.
	if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return
	}
	if apierrors.IsForbidden(err) {
		m.markForbidden(err)
		return
	}
	m.markFailed(err)
}

// markForbidden records a refused list or watch. The informer retries it
// with its backoff, so a permission granted later is picked up; the
// refusal is said once (OnAccess), not at every retry.
func (m *Monitor) markForbidden(err error) {
	m.mu.Lock()
	first := !m.forbidden
	m.forbidden = true
	m.healthy = false
	m.errRV = m.inf.LastSyncResourceVersion()
	m.errEv = m.events.Load()
	m.mu.Unlock()
	w := m.watch(m.inf.HasSynced(), false, err.Error())
	w.Forbidden = true
	m.health.SetWatch(w)
	if first {
		metrics.WatchErrors.WithLabelValues(m.name).Inc()
		if f := m.group.access; f != nil {
			f(w, false)
		}
	}
}

// Forbidden reports whether the API server refuses this watch.
func (m *Monitor) Forbidden() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.forbidden
}

func (m *Monitor) markFailed(err error) {
	metrics.WatchErrors.WithLabelValues(m.name).Inc()
	m.mu.Lock()
	m.healthy = false
	m.errRV = m.inf.LastSyncResourceVersion()
	m.errEv = m.events.Load()
	m.mu.Unlock()
	m.health.SetWatch(m.watch(m.inf.HasSynced(), false, err.Error()))
}

// markHealthy: the API server is reachable again. A forbidden watch stays
// forbidden until its informer lists.
func (m *Monitor) markHealthy() {
	m.mu.Lock()
	if m.forbidden {
		m.mu.Unlock()
		return
	}
	m.healthy = true
	m.mu.Unlock()
	m.health.SetWatch(m.watch(m.inf.HasSynced(), true, ""))
}

// check marks the watch healthy again once the informer relisted (its last
// resource version moved) or delivered an event since it broke.
func (m *Monitor) check() {
	m.mu.Lock()
	if m.healthy {
		m.mu.Unlock()
		if m.inf.HasSynced() {
			m.health.SetWatch(m.watch(true, true, ""))
		}
		return
	}
	recovered := m.inf.LastSyncResourceVersion() != m.errRV || m.events.Load() != m.errEv
	granted := recovered && m.forbidden
	if recovered {
		m.healthy = true
		m.forbidden = false
	}
	m.mu.Unlock()
	if recovered {
		w := m.watch(m.inf.HasSynced(), true, "")
		m.health.SetWatch(w)
		if f := m.group.access; granted && f != nil {
			f(w, true)
		}
	}
}

// Run runs the informer until ctx is done, checking its health every
// interval, and removes the watch from the health view when it stops.
func (m *Monitor) Run(ctx context.Context, interval time.Duration) {
	metrics.Watches.Inc()
	defer metrics.Watches.Dec()
	m.group.mu.Lock()
	m.group.monitors[m] = true
	m.group.mu.Unlock()
	defer func() {
		m.group.mu.Lock()
		delete(m.group.monitors, m)
		m.group.mu.Unlock()
		m.health.RemoveWatch(m.name)
	}()
	go m.inf.RunWithContext(ctx)
	go m.WaitForSync(ctx)
	tick.Every(ctx, interval, nil, func() bool { m.check(); return false })
}

// WaitForSync waits until the informer has synced or is forbidden (a
// watch this user may not list cannot sync; it is reported and retried)
// or ctx ends, and reports the sync at once: whoever waited on it goes on
// with the health view (and /readyz) already saying synced, not a check
// interval later.
func (m *Monitor) WaitForSync(ctx context.Context) bool {
	if !cache.WaitForCacheSync(ctx.Done(), func() bool { return m.inf.HasSynced() || m.Forbidden() }) {
		return false
	}
	m.check()
	return true
}

// Healthy reports the last known health.
func (m *Monitor) Healthy() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.healthy
}
