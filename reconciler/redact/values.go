package redact

import (
	"context"

	"github.com/go-logr/logr"
)

// Error returns err with its message redacted; errors.Is and errors.As
// still reach the original (the queue reads its requeue decision so), but
// its text is what Error returns.
func (s *Set) Error(err error) error {
	if err == nil || s.Empty() {
		return err
	}
	msg := err.Error()
	red := s.String(msg)
	if red == msg {
		return err
	}
	return &redactedError{msg: red, err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// Value returns a copy of v (a JSON-like value) with its strings, map keys
// included, redacted; v itself when the set is empty. v is not changed.
func (s *Set) Value(v any) any {
	if s.Empty() {
		return v
	}
	return s.value(v)
}

func (s *Set) value(v any) any {
	switch x := v.(type) {
	case string:
		return s.String(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[s.String(k)] = s.value(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = s.value(e)
		}
		return out
	case []byte:
		return []byte(s.String(string(x)))
	}
	return v
}

// Logger returns l writing through the set: the message, the values
// (strings, errors, Stringers and JSON-like values) and the error of every
// line are redacted as the line is logged, so a value the set learns after
// the logger was made is still removed.
func (s *Set) Logger(l logr.Logger) logr.Logger {
	sink := l.GetSink()
	if s == nil || sink == nil {
		return l
	}
	if cd, ok := sink.(logr.CallDepthLogSink); ok {
		sink = cd.WithCallDepth(1) // this sink's frame
	}
	return logr.New(&sinkWrapper{sink: sink, set: s})
}

// sinkWrapper keeps WithValues' values itself and hands them to the sink
// with each line, so they are redacted with what the set holds then.
type sinkWrapper struct {
	sink   logr.LogSink
	set    *Set
	values []any
}

// Init does nothing: the wrapped sink was set up by its own logger, and a
// wrapper is made per reconcile (Init again would add its depth each time).
func (w *sinkWrapper) Init(logr.RuntimeInfo)  {}
func (w *sinkWrapper) Enabled(level int) bool { return w.sink.Enabled(level) }

func (w *sinkWrapper) Info(level int, msg string, kv ...any) {
	w.sink.Info(level, w.set.String(msg), w.set.kv(w.with(kv))...)
}

func (w *sinkWrapper) Error(err error, msg string, kv ...any) {
	w.sink.Error(w.set.Error(err), w.set.String(msg), w.set.kv(w.with(kv))...)
}

func (w *sinkWrapper) with(kv []any) []any {
	if len(w.values) == 0 {
		return kv
	}
	return append(append(make([]any, 0, len(w.values)+len(kv)), w.values...), kv...)
}

func (w *sinkWrapper) WithValues(kv ...any) logr.LogSink {
	return &sinkWrapper{sink: w.sink, set: w.set, values: w.with(kv)}
}

func (w *sinkWrapper) WithName(name string) logr.LogSink {
	return &sinkWrapper{sink: w.sink.WithName(name), set: w.set, values: w.values}
}

// kv redacts the values of a key/value list (keys are kroscope's words).
func (s *Set) kv(kv []any) []any {
	if s.Empty() {
		return kv
	}
	out := make([]any, len(kv))
	for i, v := range kv {
		switch x := v.(type) {
		case string:
			v = s.String(x)
		case error:
			v = s.Error(x)
		case interface{ String() string }:
			if str := x.String(); s.String(str) != str {
				v = s.String(str)
			}
		default:
			v = s.Value(x)
		}
		out[i] = v
	}
	return out
}

type ctxKey struct{}

// NewContext returns ctx carrying s: the API calls a reconcile makes carry
// it, so what observes them (the engine's log of failed calls) redacts
// the server's answers with the reconcile's values.
func NewContext(ctx context.Context, s *Set) context.Context {
	return context.WithValue(ctx, ctxKey{}, s)
}

// FromContext returns the set ctx carries, or nil (which redacts nothing).
func FromContext(ctx context.Context) *Set {
	s, _ := ctx.Value(ctxKey{}).(*Set)
	return s
}
