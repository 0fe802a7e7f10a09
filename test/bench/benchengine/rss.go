package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// rssSampler follows the process's resident memory while the instances
// converge, split as /proc/self/status splits it: anonymous (what the Go
// runtime allocated: heap, stacks) and file-backed (the binary's own pages,
// mapped by the kernel from the page cache as code runs, shared and
// reclaimable). ru_maxrss counts both; the split shows what the work costs
// beside what the binary costs.
type rssSampler struct {
	mu                 sync.Mutex
	peakAnon, peakFile int64 // KiB
}

func startRSSSampler(ctx context.Context, every time.Duration) *rssSampler {
	s := &rssSampler{}
	s.sample()
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				s.sample()
			}
		}
	}()
	return s
}

func (s *rssSampler) sample() {
	anon, file := statusKB("RssAnon:"), statusKB("RssFile:")
	s.mu.Lock()
	s.peakAnon, s.peakFile = max(s.peakAnon, anon), max(s.peakFile, file)
	s.mu.Unlock()
}

// peaks returns the highest anonymous and file-backed RSS seen, in KiB.
func (s *rssSampler) peaks() (anon, file int64) {
	s.sample()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peakAnon, s.peakFile
}

// statusKB reads one "Name: N kB" line of /proc/self/status, or -1.
func statusKB(name string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(l, name); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err == nil {
				return kb
			}
		}
	}
	return -1
}
