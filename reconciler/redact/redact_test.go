package redact

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
)

func secret(data map[string]string, stringData map[string]string) map[string]any {
	obj := map[string]any{"apiVersion": "v1", "kind": "Secret"}
	d := map[string]any{}
	for k, v := range data {
		d[k] = base64.StdEncoding.EncodeToString([]byte(v))
	}
	obj["data"] = d
	if stringData != nil {
		sd := map[string]any{}
		for k, v := range stringData {
			sd[k] = v
		}
		obj["stringData"] = sd
	}
	return obj
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestString(t *testing.T) {
	const m = Marker
	cases := []struct {
		name    string
		objs    []map[string]any
		in, out string
	}{
		{"no secret read", nil, "no such key: s3cr3t-value", "no such key: s3cr3t-value"},
		{"map key (unquoted)", []map[string]any{secret(map[string]string{"t": "s3cr3t-value"}, nil)},
			"data pending (no such key: s3cr3t-value)", "data pending (no such key: " + m + ")"},
		{"label, as the API server quotes it", []map[string]any{secret(map[string]string{"t": "s3cr3t-value"}, nil)},
			`metadata.labels: Invalid value: "s3cr3t-value!": a valid label`, `metadata.labels: Invalid value: "` + m + `!": a valid label`},
		{"stored (base64) form", []map[string]any{secret(map[string]string{"t": "s3cr3t-value"}, nil)},
			"value " + b64("s3cr3t-value"), "value " + m},
		{"every occurrence", []map[string]any{secret(map[string]string{"t": "abcd"}, nil)},
			"abcd-abcd abcdabcd", m + "-" + m + " " + m},
		{"shorter than MinLen is kept", []map[string]any{secret(map[string]string{"t": "abc"}, nil)},
			"abc is short", "abc is short"},
		{"its base64 form is long enough", []map[string]any{secret(map[string]string{"t": "abc"}, nil)},
			"stored as " + b64("abc"), "stored as " + m},
		{"Go-quoted form (%q)", []map[string]any{secret(map[string]string{"t": "line1\nline2"}, nil)},
			fmt.Sprintf("Invalid value: %q", "line1\nline2"), `Invalid value: "` + m + `"`},
		{"JSON-quoted form", []map[string]any{secret(map[string]string{"t": "a<b>&c"}, nil)},
			`{"v":"a\u003cb\u003e\u0026c"}`, `{"v":"` + m + `"}`},
		{"regex fragment", []map[string]any{secret(map[string]string{"t": "pl4nted(T0KEN"}, nil)},
			"error parsing regexp: missing closing ): `pl4nted(T0KEN`", "error parsing regexp: missing closing ): `" + m + "`"},
		{"overlapping values become one span", []map[string]any{secret(map[string]string{"a": "abcdef", "b": "defghi"}, nil)},
			"x abcdefghi y", "x " + m + " y"},
		{"a value inside another", []map[string]any{secret(map[string]string{"a": "abcdefgh", "b": "cdef"}, nil)},
			"abcdefgh cdef", m + " " + m},
		{"stringData (a rendered Secret)", []map[string]any{secret(nil, map[string]string{"t": "from-the-spec"})},
			"from-the-spec / " + b64("from-the-spec"), m + " / " + m},
		{"not a Secret", []map[string]any{{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"t": "s3cr3t-value"}}},
			"s3cr3t-value", "s3cr3t-value"},
		{"a value inside the marker is not redacted twice", []map[string]any{secret(map[string]string{"t": "Secret"}, nil)},
			"Secret then " + m, m + " then " + m},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &Set{}
			for _, o := range c.objs {
				s.AddSecret(o)
			}
			if got := s.String(c.in); got != c.out {
				t.Errorf("String(%q)\n got %q\nwant %q", c.in, got, c.out)
			}
			if got := s.String(s.String(c.in)); got != c.out {
				t.Errorf("twice: got %q, want %q", got, c.out)
			}
		})
	}
}

func TestNilSetRedactsNothing(t *testing.T) {
	var s *Set
	s.AddSecret(secret(map[string]string{"t": "s3cr3t-value"}, nil))
	if got := s.String("s3cr3t-value"); got != "s3cr3t-value" {
		t.Errorf("got %q", got)
	}
	if err := errors.New("x"); s.Error(err) != err {
		t.Error("Error wrapped with an empty set")
	}
}

func TestErrorKeepsTheChain(t *testing.T) {
	s := &Set{}
	s.AddSecret(secret(map[string]string{"t": "s3cr3t-value"}, nil))
	base := errors.New("rejected s3cr3t-value!")
	err := s.Error(fmt.Errorf("resource x: %w", base))
	if strings.Contains(err.Error(), "s3cr3t") || !strings.Contains(err.Error(), "resource x: rejected "+Marker+"!") {
		t.Errorf("message %q", err.Error())
	}
	if !errors.Is(err, base) {
		t.Error("errors.Is does not reach the cause")
	}
	if clean := errors.New("clean"); s.Error(clean) != clean {
		t.Error("an error without a value was wrapped")
	}
}

func TestValue(t *testing.T) {
	s := &Set{}
	s.AddSecret(secret(map[string]string{"t": "s3cr3t-value"}, nil))
	in := map[string]any{"a": []any{"x s3cr3t-value", int64(3)}, "s3cr3t-value": true}
	out := s.Value(in).(map[string]any)
	if fmt.Sprint(out) == fmt.Sprint(in) || strings.Contains(fmt.Sprint(out), "s3cr3t") {
		t.Errorf("got %v", out)
	}
	if in["a"].([]any)[0] != "x s3cr3t-value" {
		t.Error("the input was changed")
	}
}

func TestLogger(t *testing.T) {
	var buf bytes.Buffer
	base := funcr.New(func(prefix, args string) { buf.WriteString(prefix + args + "\n") }, funcr.Options{Verbosity: 1, LogCaller: funcr.All})
	s := &Set{}
	log := s.Logger(base).WithValues("early", "s3cr3t-value")
	// Added after the logger was made: still redacted.
	s.AddSecret(secret(map[string]string{"t": "s3cr3t-value"}, nil))
	log.V(1).Info("msg s3cr3t-value", "error", errors.New("no such key: s3cr3t-value"), "n", 3)
	log.Error(errors.New("rejected s3cr3t-value"), "failed", "why", "s3cr3t-value")
	if strings.Contains(buf.String(), "s3cr3t") || strings.Count(buf.String(), Marker) < 5 {
		t.Errorf("log:\n%s", buf.String())
	}
	// The caller is the line that logged, not the wrapper.
	if strings.Contains(buf.String(), "values.go") || strings.Count(buf.String(), "redact_test.go") != 2 {
		t.Errorf("callers:\n%s", buf.String())
	}
}
