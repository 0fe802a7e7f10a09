package engine

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kroscope/kroscope/engine/probes"
	"github.com/kroscope/kroscope/engine/state"
)

func newHealthEngine(t *testing.T) *Engine {
	t.Helper()
	e, err := New(Options{ClientSet: fakeSet(), DisableLease: true, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestHealthyWhileTheHeartbeatGoesOn(t *testing.T) {
	e := newHealthEngine(t)
	t0 := time.Unix(1_000_000, 0)
	if err := e.Healthy(t0); err != nil {
		t.Fatalf("before Run: %v, want healthy", err)
	}
	e.running.Store(true)
	e.health.start(t0)
	for i := 1; i <= 100; i++ {
		e.health.heartbeat(t0.Add(time.Duration(i)*time.Second), 0)
	}
	if err := e.Healthy(t0.Add(101 * time.Second)); err != nil {
		t.Fatalf("heartbeat every second, idle workers: %v, want healthy", err)
	}
	// No heartbeat for longer than StallAfter: the loop is stuck.
	err := e.Healthy(t0.Add(100*time.Second + StallAfter + time.Second))
	if err == nil || !strings.Contains(err.Error(), "stalled") {
		t.Fatalf("no heartbeat for %s: %v, want stalled", StallAfter, err)
	}
}

// A heartbeat that cannot take the graph table's lock does not beat: a deadlock
// on it shows as a stall.
func TestHeartbeatWaitsForTheEngineLock(t *testing.T) {
	e := newHealthEngine(t)
	t0 := time.Unix(1_000_000, 0)
	e.running.Store(true)
	e.health.start(t0)
	e.table.mu.Lock()
	done := make(chan struct{})
	go func() { e.health.heartbeat(t0.Add(time.Second), 0); close(done) }()
	select {
	case <-done:
		t.Fatal("heartbeat ran while the engine lock was held")
	case <-time.After(200 * time.Millisecond):
	}
	if err := e.Healthy(t0.Add(StallAfter + 2*time.Second)); err == nil {
		t.Error("engine lock held past StallAfter: healthy, want stalled")
	}
	e.table.mu.Unlock()
	<-done
}

func TestHealthyFailsWhenEveryWorkerIsStuck(t *testing.T) {
	e := newHealthEngine(t)
	t0 := time.Unix(1_000_000, 0)
	e.running.Store(true)
	e.health.start(t0)
	e.health.heartbeat(t0, 7)
	e.work.busy.Store(2) // both workers
	at := t0
	for at.Sub(t0) <= WedgedAfter {
		at = at.Add(time.Second)
		e.health.heartbeat(at, 7) // no reconcile finishes
	}
	err := e.Healthy(at)
	if err == nil || !strings.Contains(err.Error(), "wedged") {
		t.Fatalf("all workers busy for %s without progress: %v, want wedged", at.Sub(t0), err)
	}
	e.health.heartbeat(at.Add(time.Second), 8) // one finished
	if err := e.Healthy(at.Add(time.Second)); err != nil {
		t.Fatalf("after a reconcile finished: %v, want healthy", err)
	}
	// Busy but progressing is healthy, and so are idle workers.
	e.work.busy.Store(1)
	e.health.heartbeat(at.Add(WedgedAfter*2), 8)
	if err := e.Healthy(at.Add(WedgedAfter * 2)); err != nil {
		t.Fatalf("a free worker: %v, want healthy", err)
	}
}

func TestReadyAfterStartupAndSyncedWatches(t *testing.T) {
	e := newHealthEngine(t)
	if err := e.Ready(); err == nil {
		t.Fatal("ready before Run")
	}
	e.store.SetStartup(state.Startup{Phase: "loading graphs"})
	if err := e.Ready(); err == nil || !strings.Contains(err.Error(), "loading graphs") {
		t.Fatalf("while loading graphs: %v, want not ready naming the phase", err)
	}
	e.store.SetStartup(state.Startup{Done: true, Phase: "running"})
	e.store.SetWatch(state.Watch{Name: "webapps.kro.run", Healthy: true})
	if err := e.Ready(); err == nil || !strings.Contains(err.Error(), "webapps.kro.run") {
		t.Fatalf("a watch not synced: %v, want not ready naming it", err)
	}
	e.store.SetWatch(state.Watch{Name: "webapps.kro.run", Healthy: true, Synced: true})
	if err := e.Ready(); err != nil {
		t.Fatalf("started and synced: %v, want ready", err)
	}
	// A watch the API server refuses is reported, not waited for.
	e.store.SetWatch(state.Watch{Name: "secrets (children)", Forbidden: true})
	if err := e.Ready(); err != nil {
		t.Fatalf("with a forbidden watch: %v, want ready", err)
	}
	e.store.SetFatal(&state.Fatal{Title: "cannot reach the API server"})
	if err := e.Ready(); err == nil {
		t.Error("ready after a fatal error")
	}
	if err := e.Healthy(time.Now()); err == nil {
		t.Error("healthy after a fatal error")
	}
}

func TestProbeHandlerStatusCodes(t *testing.T) {
	e := newHealthEngine(t)
	srv := httptest.NewServer(probes.Handler(func() error { return e.Healthy(time.Now()) }, e.Ready))
	defer srv.Close()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, _ := get("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz = %d, want 200", code)
	}
	if code, _ := get("/readyz"); code != http.StatusInternalServerError {
		t.Errorf("/readyz before startup = %d, want 500", code)
	}
	if code, body := get("/readyz/engine"); code != http.StatusInternalServerError || !strings.Contains(body, "starting") {
		t.Errorf("/readyz/engine before startup = %d %q, want 500 saying why", code, body)
	}
	e.store.SetStartup(state.Startup{Done: true})
	if code, _ := get("/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after startup = %d, want 200", code)
	}
	if code, _ := get("/readyz/engine"); code != http.StatusOK {
		t.Errorf("/readyz/engine after startup = %d, want 200", code)
	}
	if code, _ := get("/nope"); code != http.StatusNotFound {
		t.Errorf("/nope = %d, want 404", code)
	}
}
