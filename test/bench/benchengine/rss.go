package main

import (
	"context"
	"errors"
	"io"
	"os"
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
	statm              *os.File // kept open: a sample re-reads it from the start
	buf                []byte
	peakAnon, peakFile int64 // KiB
}

func startRSSSampler(ctx context.Context, every time.Duration) *rssSampler {
	s := &rssSampler{buf: make([]byte, 256)}
	s.statm, _ = os.Open("/proc/self/statm") // nil: no samples, peaks stay 0
	go utilwait.UntilWithContext(ctx, func(context.Context) { s.sample() }, every)
	return s
}

func (s *rssSampler) sample() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.statm == nil {
		return
	}
	n, err := s.statm.ReadAt(s.buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return
	}
	anon, file, ok := procstatus.Statm(s.buf[:n])
	if !ok {
		return
	}
	s.peakAnon, s.peakFile = max(s.peakAnon, anon), max(s.peakFile, file)
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
