// Package httpserve runs the engine's own HTTP endpoints (/metrics, the
// health probes) for as long as the engine runs.
package httpserve

import (
	"context"
	"net"
	"net/http"
	"time"
)

// shutdownGrace bounds how long requests in flight may finish once the
// engine stops.
const shutdownGrace = 5 * time.Second

// Until serves srv on ln until ctx is done, then shuts it down, and
// returns ln's address at once.
func Until(ctx context.Context, srv *http.Server, ln net.Listener) net.Addr {
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	// Serve only fails once the listener is closed by Shutdown.
	go func() { _ = srv.Serve(ln) }()
	return ln.Addr()
}
