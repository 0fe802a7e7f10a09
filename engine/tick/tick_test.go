package tick

import (
	"context"
	"testing"
	"time"
)

// Every stops when f says so, wakes early on wake, and stops with ctx.
func TestEvery(t *testing.T) {
	n := 0
	Every(context.Background(), time.Millisecond, nil, func() bool { n++; return n == 3 })
	if n != 3 {
		t.Fatalf("f ran %d times, want 3", n)
	}
	wake := make(chan struct{}, 1)
	wake <- struct{}{}
	start := time.Now()
	Every(context.Background(), time.Hour, wake, func() bool { return true })
	if time.Since(start) > time.Minute {
		t.Fatal("wake did not run f early")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	Every(ctx, time.Hour, nil, func() bool { t.Fatal("f ran after ctx was done"); return true })
}
