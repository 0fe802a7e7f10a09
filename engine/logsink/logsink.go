// Package logsink is a logr sink that tees every log line into the engine's
// state store (the TUI's log pane) and, optionally, a writer (stderr or a
// --log-file) as one text line per entry.
package logsink

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/termtext"
)

// Appender receives log lines; *state.Store implements it.
type Appender interface {
	AppendLog(state.LogLine)
}

// Options configure a sink.
type Options struct {
	// Store receives every line that passes Verbosity; may be nil.
	Store Appender
	// Writer receives the same lines as text; may be nil.
	Writer io.Writer
	// Verbosity is the highest V level logged (0 = info only).
	Verbosity int
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
}

// New returns a logger writing to the store and writer of o.
func New(o Options) logr.Logger {
	if o.Now == nil {
		o.Now = time.Now
	}
	return logr.New(&sink{o: o, mu: &sync.Mutex{}})
}

type sink struct {
	o      Options
	mu     *sync.Mutex // serialises writes to o.Writer; shared by derived sinks
	name   string
	values []any
}

func (s *sink) Init(logr.RuntimeInfo) {}

func (s *sink) Enabled(level int) bool { return level <= s.o.Verbosity }

func (s *sink) Info(level int, msg string, kv ...any) {
	lvl := "info"
	if level > 0 {
		lvl = "debug"
	}
	s.emit(lvl, msg, nil, kv)
}

func (s *sink) Error(err error, msg string, kv ...any) {
	s.emit("error", msg, err, kv)
}

func (s *sink) WithValues(kv ...any) logr.LogSink {
	c := *s
	c.values = append(append([]any(nil), s.values...), kv...)
	return &c
}

func (s *sink) WithName(name string) logr.LogSink {
	c := *s
	if c.name == "" {
		c.name = name
	} else {
		c.name += "." + name
	}
	return &c
}

func (s *sink) emit(level, msg string, err error, kv []any) {
	var b strings.Builder
	writeKV(&b, s.values)
	writeKV(&b, kv)
	if err != nil {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "error=%q", err.Error())
	}
	if s.name != "" {
		msg = s.name + ": " + msg
	}
	line := state.LogLine{At: s.o.Now(), Level: level, Message: msg, KV: b.String()}
	if s.o.Store != nil {
		s.o.Store.AppendLog(line)
	}
	if s.o.Writer != nil {
		text := line.At.Format("15:04:05.000") + " " + strings.ToUpper(level[:1]) + " " + msg
		if line.KV != "" {
			text += " " + line.KV
		}
		s.mu.Lock()
		// Messages and values come from graphs and instances: one line,
		// no terminal escapes.
		_, _ = io.WriteString(s.o.Writer, termtext.EscapeLine(text)+"\n")
		s.mu.Unlock()
	}
}

// writeKV renders key/value pairs as k=v; a dangling key gets "(missing)".
func writeKV(b *strings.Builder, kv []any) {
	for i := 0; i < len(kv); i += 2 {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		k := fmt.Sprint(kv[i])
		if i+1 >= len(kv) {
			fmt.Fprintf(b, "%s=(missing)", k)
			break
		}
		fmt.Fprintf(b, "%s=%s", k, value(kv[i+1]))
	}
}

func value(v any) string {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case error:
		s = x.Error()
	case fmt.Stringer:
		s = x.String()
	default:
		s = fmt.Sprint(x)
	}
	if s == "" || strings.ContainsAny(s, " \t\n\"=") {
		return fmt.Sprintf("%q", s)
	}
	return s
}

// Tee returns a logger that writes every entry to both a and b. A zero
// Logger (no sink) is skipped.
func Tee(a, b logr.Logger) logr.Logger {
	switch {
	case a.GetSink() == nil:
		return b
	case b.GetSink() == nil:
		return a
	}
	return logr.New(&tee{a: a.GetSink(), b: b.GetSink()})
}

type tee struct{ a, b logr.LogSink }

func (t *tee) Init(ri logr.RuntimeInfo) {
	ri.CallDepth++
	t.a.Init(ri)
	t.b.Init(ri)
}
func (t *tee) Enabled(l int) bool { return t.a.Enabled(l) || t.b.Enabled(l) }
func (t *tee) Info(l int, msg string, kv ...any) {
	if t.a.Enabled(l) {
		t.a.Info(l, msg, kv...)
	}
	if t.b.Enabled(l) {
		t.b.Info(l, msg, kv...)
	}
}
func (t *tee) Error(err error, msg string, kv ...any) {
	t.a.Error(err, msg, kv...)
	t.b.Error(err, msg, kv...)
}
func (t *tee) WithValues(kv ...any) logr.LogSink {
	return &tee{a: t.a.WithValues(kv...), b: t.b.WithValues(kv...)}
}
func (t *tee) WithName(n string) logr.LogSink { return &tee{a: t.a.WithName(n), b: t.b.WithName(n)} }
