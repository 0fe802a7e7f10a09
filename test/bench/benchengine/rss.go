package main

import (
	"context"
	"sync"
	"time"

	utilwait "k8s.io/apimachinery/pkg/util/wait"

	"github.com/kroscope/kroscope/test/bench/procstatus"
)

// rssSampler follows the process's resident memory while the instances
// converge, split as /proc/self/statm splits it: anonymous (what the Go
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
	go utilwait.UntilWithContext(ctx, func(context.Context) { s.sample() }, every)
	return s
}

func (s *rssSampler) sample() {
	anon, file, ok := procstatus.RSS("/proc/self/statm")
	if !ok {
		return
	}
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

// vmHWM is the process's peak resident memory (KiB), or -1.
func vmHWM() int64 {
	if kb, ok := procstatus.KB("/proc/self/status", "VmHWM:"); ok {
		return kb
	}
	return -1
}
