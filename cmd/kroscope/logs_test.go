package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestRunLoggerJSON(t *testing.T) {
	var buf bytes.Buffer
	log, err := newRunLogger(&buf, LogFormatJSON, 0)
	if err != nil {
		t.Fatal(err)
	}
	// A value from a graph may hold anything: a CSI (C1), an escape (C0),
	// a bidirectional override.
	hostile := "web\u009b2J\x1b[31m\u202eapp"
	log.WithName("engine").Info("serving graph", "graph", hostile, "kind", "WebApp")
	log.Error(errors.New("boom"), "cannot serve", "graph", "g")
	log.V(1).Info("debug detail") // dropped at verbosity 0

	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want 2 (the debug one dropped):\n%s", len(lines), buf.String())
	}
	for _, l := range lines {
		if strings.ContainsFunc(l, func(r rune) bool { return r == '\x1b' || r == '\u009b' || r == '\u202e' }) {
			t.Errorf("raw control or bidi rune in a JSON log line: %q", l)
		}
	}
	var first, second map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatalf("line 1 is not JSON: %v\n%s", err, lines[0])
	}
	if err := json.Unmarshal([]byte(lines[1]), &second); err != nil {
		t.Fatalf("line 2 is not JSON: %v\n%s", err, lines[1])
	}
	if first["msg"] != "serving graph" || first["level"] != "INFO" || first["logger"] != "engine" || first["graph"] != hostile || first["kind"] != "WebApp" || first["time"] == nil {
		t.Errorf("line 1 = %v, want msg, level INFO, logger engine, the graph decoded as written, kind, time", first)
	}
	if second["level"] != "ERROR" || second["err"] != "boom" {
		t.Errorf("line 2 = %v, want level ERROR and err boom", second)
	}
}

func TestRunLoggerDebugAndFormats(t *testing.T) {
	var buf bytes.Buffer
	log, err := newRunLogger(&buf, LogFormatJSON, 1)
	if err != nil {
		t.Fatal(err)
	}
	log.V(1).Info("debug detail")
	if !strings.Contains(buf.String(), `"msg":"debug detail"`) {
		t.Errorf("--log-level 1 drops V(1) lines: %q", buf.String())
	}
	buf.Reset()
	log, err = newRunLogger(&buf, LogFormatText, 0)
	if err != nil {
		t.Fatal(err)
	}
	log.Info("serving graph", "graph", "g")
	if !strings.Contains(buf.String(), "I serving graph graph=g") {
		t.Errorf("text line = %q", buf.String())
	}
	if _, err := newRunLogger(&buf, "yaml", 0); err == nil || !strings.Contains(err.Error(), "--log-format") {
		t.Errorf("--log-format yaml: %v, want an error naming the flag", err)
	}
}
