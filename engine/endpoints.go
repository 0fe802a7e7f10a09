package engine

import (
	"context"
	"errors"

	"k8s.io/client-go/rest"

	"github.com/kroscope/kroscope/engine/metrics"
)

// serveMetrics starts /metrics when asked for: plain HTTP, or with
// --metrics-secure HTTPS to clients the API server authenticates and
// authorizes (metrics.Serve).
func (e *Engine) serveMetrics(ctx context.Context) error {
	if e.o.MetricsBindAddress == "" || e.o.MetricsBindAddress == "0" {
		return nil
	}
	var auth *rest.Config
	if e.o.MetricsSecure {
		if auth = e.cl.own().Config(); auth == nil {
			return e.fatal("cannot serve metrics", errors.New("--metrics-secure needs a cluster to authenticate scrapers with"), "leave --metrics-secure off")
		}
	}
	addr, err := metrics.Serve(ctx, e.o.MetricsBindAddress, auth)
	if err != nil {
		return e.fatal("cannot serve metrics", err, "choose another --metrics-bind-address")
	}
	e.log.Info("serving metrics", "address", addr.String(), "authenticated", e.o.MetricsSecure)
	return nil
}
