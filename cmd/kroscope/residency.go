package main

import (
	"context"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/internal/residency"
)

// releaseOnceReady drops the binary's pages again once e is ready (start-up
// over: graphs compiled, watches synced), so that code only start-up ran
// (package initialisation, discovery, compiling graphs) does not stay
// resident for the rest of a long run; see package residency.
func releaseOnceReady(ctx context.Context, e *engine.Engine) {
	changed, cancel := e.Subscribe()
	defer cancel()
	for e.Ready() != nil {
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
	residency.Release()
}
