package logsink

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/kroscope/kroscope/engine/state"
)

func TestTeesIntoStoreAndWriter(t *testing.T) {
	st := state.NewStore()
	var buf bytes.Buffer
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	log := New(Options{Store: st, Writer: &buf, Now: func() time.Time { return at }})
	log.WithName("engine").WithValues("graph", "web app").Info("serving", "gvr", "webapps.kro.run")
	log.Error(errors.New("boom"), "apply failed", "dangling")
	log.V(1).Info("hidden")

	logs := st.Snapshot().Logs
	if len(logs) != 2 {
		t.Fatalf("got %d lines, want 2: %+v", len(logs), logs)
	}
	if logs[0].Message != "engine: serving" || logs[0].KV != `graph="web app" gvr=webapps.kro.run` || logs[0].Level != "info" {
		t.Errorf("first line = %+v", logs[0])
	}
	if logs[1].Level != "error" || logs[1].KV != `dangling=(missing) error="boom"` {
		t.Errorf("second line = %+v", logs[1])
	}
	want := "03:04:05.000 I engine: serving graph=\"web app\" gvr=webapps.kro.run\n" +
		"03:04:05.000 E apply failed dangling=(missing) error=\"boom\"\n"
	if buf.String() != want {
		t.Errorf("writer got\n%s\nwant\n%s", buf.String(), want)
	}
}

func TestVerbosity(t *testing.T) {
	st := state.NewStore()
	log := New(Options{Store: st, Verbosity: 1})
	log.V(1).Info("debug line")
	log.V(2).Info("too verbose")
	logs := st.Snapshot().Logs
	if len(logs) != 1 || logs[0].Level != "debug" {
		t.Fatalf("got %+v", logs)
	}
}

func TestTee(t *testing.T) {
	a, b := state.NewStore(), state.NewStore()
	log := Tee(New(Options{Store: a}), New(Options{Store: b, Verbosity: 1}))
	log.WithName("x").Info("both")
	log.V(1).Info("only b")
	if n := len(a.Snapshot().Logs); n != 1 {
		t.Errorf("a got %d lines, want 1", n)
	}
	if l := b.Snapshot().Logs; len(l) != 2 || l[0].Message != "x: both" {
		t.Errorf("b got %+v", l)
	}
}

// TestWriterEscapesControlCharacters: a message or value carrying terminal
// escapes (a graph or instance name, an error text) is written escaped,
// on one line.
func TestWriterEscapesControlCharacters(t *testing.T) {
	var buf bytes.Buffer
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	log := New(Options{Writer: &buf, Now: func() time.Time { return at }})
	log.Info("graph \x1b]0;pwned\x07 served", "instance", "a\x1b[2Jb")
	want := `03:04:05.000 I graph \x1b]0;pwned\x07 served instance=a\x1b[2Jb` + "\n"
	if buf.String() != want {
		t.Errorf("writer got %q, want %q", buf.String(), want)
	}
}
