package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kroscope/kroscope/engine/logsink"
	"github.com/kroscope/kroscope/termtext"
)

// Log formats of `kroscope run --log-format`.
const (
	LogFormatText = "text"
	LogFormatJSON = "json"
)

// newRunLogger returns the logger `kroscope run` writes to w: one text line
// per entry, or one JSON object per line (time, level, msg, logger and the
// entry's key/values) for a Pod's log collector. JSON goes through logr's
// bridge to the standard library's slog JSON handler: no extra module, and
// jsonEscaper escapes what its encoder leaves raw, as the text sink
// escapes terminal sequences. verbosity is the highest V level kept (0 info, 1 debug).
func newRunLogger(w io.Writer, format string, verbosity int) (logr.Logger, error) {
	switch format {
	case "", LogFormatText:
		return logsink.New(logsink.Options{Writer: termtext.Writer(w), Verbosity: verbosity}), nil
	case LogFormatJSON:
		// logr's V(n) is slog level -n.
		h := slog.NewJSONHandler(jsonEscaper{w}, &slog.HandlerOptions{Level: slog.Level(-verbosity)})
		return logr.FromSlogHandler(h), nil
	}
	return logr.Logger{}, fmt.Errorf("unknown --log-format %q: use %s or %s", format, LogFormatText, LogFormatJSON)
}

// routeLibraryLogs sends client-go's (klog) and controller-runtime's logs
// (its health handlers log failed probes) to log, so nothing else writes
// to stderr or the terminal. controller-runtime's lines are debug level:
// a probe that fails while starting is what /readyz is for, not news.
func routeLibraryLogs(log logr.Logger) {
	setClientGoLogger(log.WithName("client-go"))
	ctrllog.SetLogger(log.WithName("controller-runtime").V(1))
}

// jsonEscaper writes what slog's JSON handler leaves as it is but a
// terminal acts on (C1 controls such as CSI, DEL, bidirectional overrides;
// slog escapes only C0) as JSON \uXXXX escapes. Such runes can only be
// inside JSON strings, where the escape decodes to the same text: lines
// stay valid JSON and `kubectl logs` on a terminal shows them inert.
type jsonEscaper struct{ w io.Writer }

func (j jsonEscaper) Write(p []byte) (int, error) {
	s := string(p)
	if !strings.ContainsFunc(s, termtext.Unsafe) {
		return j.w.Write(p)
	}
	var b strings.Builder
	for _, r := range s {
		if r >= 0x20 && termtext.Unsafe(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	if _, err := io.WriteString(j.w, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}
