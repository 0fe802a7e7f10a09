package reconciler

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Every index is called once; never more than maxParallel at once, and
// that many when there is enough work; the goroutines alive stay within
// maxParallel of the start (the items of a big collection do not each wait
// in a goroutine of their own); nothing is called for no items.
func TestEachAtOnce(t *testing.T) {
	for _, n := range []int{0, 1, 2, maxParallel, 3*maxParallel + 1} {
		var mu sync.Mutex
		calls := make([]int, n)
		var running, most, goroutines atomic.Int64
		base := int64(runtime.NumGoroutine())
		want := int64(min(n, maxParallel))
		eachAtOnce(n, func(i int) {
			now := running.Add(1)
			defer running.Add(-1)
			for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
			}
			if g := int64(runtime.NumGoroutine()) - base; g > goroutines.Load() {
				goroutines.Store(g)
			}
			// Wait until as many run as may (a bound that ran fewer
			// would end the wait at the deadline, and fail below).
			for deadline := time.Now().Add(10 * time.Second); most.Load() < want && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			mu.Lock()
			calls[i]++
			mu.Unlock()
		})
		for i, c := range calls {
			if c != 1 {
				t.Errorf("n=%d: index %d called %d times", n, i, c)
			}
		}
		if most.Load() != want {
			t.Errorf("n=%d: %d ran at once, want %d", n, most.Load(), want)
		}
		// A few goroutines of earlier tests may come and go meanwhile.
		if goroutines.Load() > maxParallel+4 {
			t.Errorf("n=%d: %d goroutines beside the caller's, want at most %d", n, goroutines.Load(), maxParallel)
		}
	}
}
