//go:build bench

package bench

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/kroscope/kroscope/test/bench/procstatus"
)

// followHWM follows a child process's peak resident set size (VmHWM in
// /proc/<pid>/status, KiB) until it exits, and returns a function giving
// the last value read: call it once Wait has returned. ru_maxrss is no use for a
// child here: Go starts children with CLONE_VM, and Linux folds the
// parent's peak RSS at exec time into the child's maxrss, so a child of a
// benchmark process that has grown reports the benchmark's peak.
func followHWM(pid int) func() int64 {
	var last atomic.Int64
	done, stop := make(chan struct{}), make(chan struct{})
	path := fmt.Sprintf("/proc/%d/status", pid)
	go func() {
		defer close(done)
		for {
			kb, ok := procstatus.KB(path, "VmHWM:")
			select {
			case <-stop:
				return // reaped: the pid may be another process's by now
			default:
			}
			if !ok {
				return // exited (a zombie has no memory left to read)
			}
			last.Store(kb)
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return func() int64 { close(stop); <-done; return last.Load() }
}
