// Package probes serves a Pod's liveness and readiness endpoints, /healthz
// and /readyz, with controller-runtime's healthz handlers: the format
// kube-apiserver and controller-runtime managers use (`ok`, per-check
// subpaths such as /readyz/engine that name the failing reason, ?verbose),
// so probes and people read them as they read any controller's.
package probes

import (
	"context"
	"net"
	"net/http"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"github.com/kroscope/kroscope/engine/httpserve"
)

// Check reports a problem, or nil.
type Check func() error

// Serve serves /healthz (live) and /readyz (ready) at addr until ctx is
// done. It returns once the listener is bound, so a bad address is reported
// at start.
func Serve(ctx context.Context, addr string, live, ready Check) (net.Addr, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: Handler(live, ready), ReadHeaderTimeout: 10 * time.Second}
	return httpserve.Until(ctx, srv, ln), nil
}

// Handler routes /healthz and /readyz (and their /<check> subpaths) to one
// check named "engine" each.
func Handler(live, ready Check) http.Handler {
	mux := http.NewServeMux()
	for path, c := range map[string]Check{"/healthz": live, "/readyz": ready} {
		h := http.StripPrefix(path, &healthz.Handler{Checks: map[string]healthz.Checker{
			"engine": func(*http.Request) error { return c() },
		}})
		mux.Handle(path, h)
		mux.Handle(path+"/", h)
	}
	return mux
}
