//go:build bench

package bench

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"
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
			kb, ok := statusKB(path, "VmHWM:")
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

// statusKB reads one "Name: N kB" line of a /proc status file.
func statusKB(path, name string) (int64, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(l, name); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err == nil {
				return kb, true
			}
		}
	}
	return 0, false
}
