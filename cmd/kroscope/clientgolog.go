package main

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// klog's logger is a process-wide variable that client-go's goroutines
// read at every line (an Event still being sent when its engine stopped
// included), and klog.SetLogger writes it unguarded. So klog gets one
// logger, once, whose sink forwards each line to the logger set last:
// each command (and each test running one in this process) swaps that
// logger atomically instead of writing klog's variable again.
var clientGoLog struct {
	once    sync.Once
	current atomic.Pointer[logr.Logger]
}

// setClientGoLogger makes l receive client-go's (klog's) lines from now on.
func setClientGoLogger(l logr.Logger) {
	clientGoLog.current.Store(&l)
	clientGoLog.once.Do(func() { klog.SetLogger(logr.New(&forwardSink{})) })
}

// forwardSink sends each line to clientGoLog's current logger, with the
// names and values added to it on the way.
type forwardSink struct {
	names []string
	kv    []any
}

func (s *forwardSink) target() logr.Logger {
	l := *clientGoLog.current.Load()
	for _, n := range s.names {
		l = l.WithName(n)
	}
	return l.WithValues(s.kv...)
}

func (s *forwardSink) Init(logr.RuntimeInfo)  {}
func (s *forwardSink) Enabled(level int) bool { return s.target().V(level).Enabled() }

func (s *forwardSink) Info(level int, msg string, kv ...any) {
	s.target().V(level).Info(msg, kv...)
}

func (s *forwardSink) Error(err error, msg string, kv ...any) { s.target().Error(err, msg, kv...) }

func (s *forwardSink) WithValues(kv ...any) logr.LogSink {
	return &forwardSink{names: s.names, kv: append(slices.Clip(s.kv), kv...)}
}

func (s *forwardSink) WithName(name string) logr.LogSink {
	return &forwardSink{names: append(slices.Clip(s.names), name), kv: s.kv}
}
