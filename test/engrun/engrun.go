// Package engrun runs a kroscope engine inside a test, against the test API
// server (package envtest), and stops it when the test ends, printing the
// engine's last log lines when the test failed or ENG_DEBUG is set. Every
// request the engine sends is counted (Counter). It is the one place tests
// start an engine in-process: the end-to-end rigs (test/e2e, test/kro,
// test/deploy) build on it, and the benchmarks.
package engrun

import (
	"context"
	"errors"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/client"
)

// Config says how Start builds the engine.
type Config struct {
	// Rest is the API server's config; Wrap, when set, wraps the engine's
	// transport outside the counter. With no Rest, mod sets the ClientSet
	// (the demo's cluster) and nothing is counted.
	Rest *rest.Config
	Wrap func(http.RoundTripper) http.RoundTripper
	// Run runs the engine until ctx ends; default (*engine.Engine).Run.
	// Headless tests pass headless.Run here.
	Run func(ctx context.Context, e *engine.Engine) error
	// Namespace is the one namespace the engine serves.
	Namespace       string
	RequeueInterval time.Duration
	// LogLines of the engine's own log are printed, each after LogPrefix,
	// when the test fails.
	LogLines  int
	LogPrefix string
}

// Run is one engine running in the test process.
type Run struct {
	E *engine.Engine
	// Counter counts the engine's requests.
	*Counter
	t       testing.TB
	cancel  context.CancelFunc
	stopped chan struct{}
	err     error // Run's result, once stopped is closed
}

// Start runs an engine with the tests' defaults (no lease, no cluster
// graphs, logs kept only in the state, a minute's deletion grace); mod
// adjusts the options. The test's cleanup stops it.
func Start(t testing.TB, c Config, mod func(*engine.Options)) *Run {
	t.Helper()
	count := &Counter{}
	o := engine.Options{
		Namespace:       c.Namespace,
		DisableLease:    true,
		RequeueInterval: c.RequeueInterval,
		Log:             logr.Discard(),
		ReconcileConfig: reconciler.ReconcileConfig{DeletionGraceTimeDuration: time.Minute},
	}
	if c.Rest != nil {
		o.ClientSet = clientSet(t, c, count)
	}
	if mod != nil {
		mod(&o)
	}
	e, err := engine.New(o)
	if err != nil {
		t.Fatalf("engine.New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Run{E: e, Counter: count, t: t, cancel: cancel, stopped: make(chan struct{})}
	run := c.Run
	if run == nil {
		run = func(ctx context.Context, e *engine.Engine) error { return e.Run(ctx) }
	}
	go func() {
		r.err = run(ctx, e)
		close(r.stopped)
	}()
	t.Cleanup(func() {
		_ = r.Stop()
		if t.Failed() || os.Getenv("ENG_DEBUG") != "" {
			logs := e.Snapshot().Logs
			if len(logs) > c.LogLines {
				logs = logs[len(logs)-c.LogLines:]
			}
			for _, l := range logs {
				t.Logf("%s%s %s %s %s", c.LogPrefix, l.At.Format("15:04:05.000"), l.Level, l.Message, l.KV)
			}
		}
	})
	return r
}

// clientSet is the engine's clients on c.Rest, counted by count.
func clientSet(t testing.TB, c Config, count *Counter) *client.Set {
	t.Helper()
	cfg := rest.CopyConfig(c.Rest)
	cfg.Wrap(count.Wrap)
	if c.Wrap != nil {
		cfg.Wrap(c.Wrap)
	}
	set, err := client.NewSet(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// Cancel cancels the engine's context: it starts shutting down.
func (r *Run) Cancel() { r.cancel() }

// Done is closed once the engine's Run has returned.
func (r *Run) Done() <-chan struct{} { return r.stopped }

// Wait waits up to d for the engine's Run to return: stopped says whether
// it did, err is what it returned.
func (r *Run) Wait(d time.Duration) (stopped bool, err error) {
	select {
	case <-r.stopped:
		return true, r.err
	case <-time.After(d):
		return false, nil
	}
}

// Stop cancels the engine and waits for it (any number of times), failing
// the test when it does not stop within a minute.
func (r *Run) Stop() error {
	r.cancel()
	stopped, err := r.Wait(time.Minute)
	if !stopped {
		r.t.Errorf("the engine did not stop within a minute")
		return errors.New("the engine did not stop within a minute")
	}
	return err
}
