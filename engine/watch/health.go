// Package watch runs the engine's informers: it reports every informer's
// health (a broken watch is a first-class state), and shares metadata-only
// informers on child and external kinds between graphs, reference-counted
// and stopped when the last user releases them.
package watch

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"

	"github.com/kroscope/kroscope/engine/metrics"
	"github.com/kroscope/kroscope/engine/state"
)

// Health receives watch health; *state.Store implements it.
type Health interface {
	SetWatch(state.Watch)
	RemoveWatch(name string)
}

// Monitor tracks one informer's health under a display name. Create it with
// Monitored before the informer runs.
type Monitor struct {
	name   string
	inf    cache.SharedIndexInformer
	health Health

	mu      sync.Mutex
	healthy bool
	errRV   string // LastSyncResourceVersion when the watch broke
	events  atomic.Int64
	errEv   int64 // events count when the watch broke
}

// Monitored installs a watch error handler on inf (which must not be running
// yet) and reports its health to h under name.
func Monitored(inf cache.SharedIndexInformer, name string, h Health) *Monitor {
	m := &Monitor{name: name, inf: inf, health: h, healthy: true}
	_ = inf.SetWatchErrorHandler(func(_ *cache.Reflector, err error) { m.failed(err) })
	h.SetWatch(state.Watch{Name: name, Healthy: true})
	return m
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
	metrics.WatchErrors.WithLabelValues(m.name).Inc()
	m.mu.Lock()
	m.healthy = false
	m.errRV = m.inf.LastSyncResourceVersion()
	m.errEv = m.events.Load()
	m.mu.Unlock()
	m.health.SetWatch(state.Watch{Name: m.name, Synced: m.inf.HasSynced(), Healthy: false, Err: err.Error()})
}

// check marks the watch healthy again once the informer relisted (its last
// resource version moved) or delivered an event since it broke.
func (m *Monitor) check() {
	m.mu.Lock()
	if m.healthy {
		m.mu.Unlock()
		if m.inf.HasSynced() {
			m.health.SetWatch(state.Watch{Name: m.name, Synced: true, Healthy: true})
		}
		return
	}
	recovered := m.inf.LastSyncResourceVersion() != m.errRV || m.events.Load() != m.errEv
	if recovered {
		m.healthy = true
	}
	m.mu.Unlock()
	if recovered {
		m.health.SetWatch(state.Watch{Name: m.name, Synced: m.inf.HasSynced(), Healthy: true})
	}
}

// Run runs the informer until ctx is done, checking its health every
// interval, and removes the watch from the health view when it stops.
func (m *Monitor) Run(ctx context.Context, interval time.Duration) {
	metrics.Watches.Inc()
	defer metrics.Watches.Dec()
	defer m.health.RemoveWatch(m.name)
	go m.inf.RunWithContext(ctx)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			m.check()
		}
	}
}

// Healthy reports the last known health.
func (m *Monitor) Healthy() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.healthy
}
