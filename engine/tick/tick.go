// Package tick is the loop of the engine's periodic checks (a Lease's
// expiry, a watch's health, access asked again): one place for the ticker
// that every such check shares.
package tick

import (
	"context"
	"time"
)

// Every calls f every interval, and each time wake receives (nil: never),
// until ctx is done or f returns true.
func Every(ctx context.Context, interval time.Duration, wake <-chan struct{}, f func() (stop bool)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-wake:
		}
		if f() {
			return
		}
	}
}
