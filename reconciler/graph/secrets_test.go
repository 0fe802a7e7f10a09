package graph

import (
	"errors"
	"testing"

	"github.com/kroscope/kroscope/reconciler/redact"
)

// TestRedactText: a sensitive expression's error keeps its words and the
// names it spells, and loses what may be a value, derived ones included
// (the reconciler removes exact values anyway).
func TestRedactText(t *testing.T) {
	const m = redact.Marker
	src := `{"x": true}[string(creds.data.TOKEN).upperAscii()]`
	cases := []struct{ in, want string }{
		{"no such key: S3CR3T", "no such key: " + m},
		{"no such key: TOKEN", "no such key: TOKEN"},
		{"no such key: x", "no such key: x"},
		{`type conversion error from 'string' to 'int'`, `type conversion error from 'string' to 'int'`},
		{`type conversion error from 'string' to 'int': "s3cr3t"`, `type conversion error from 'string' to 'int': "` + m + `"`},
		{"error parsing regexp: missing closing ): `s3(cr3t`", "error parsing regexp: missing closing ): \"" + m + "\""},
		{"no such key: " + m, "no such key: " + m},
	}
	for _, c := range cases {
		if got := redactText(c.in, src); got != c.want {
			t.Errorf("redactText(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
		if got := redactText(redactText(c.in, src), src); got != c.want {
			t.Errorf("twice %q: got %q", c.in, got)
		}
	}
}

// TestRedactPendingDetail: a sensitive expression's pending error is
// redacted in the detail callers read from it directly, and stays pending.
func TestRedactPendingDetail(t *testing.T) {
	e := &Expression{Source: `{"x": true}[string(creds.data.TOKEN)]`, sensitive: true}
	err := e.redact(classify(errors.New("no such key: S3CR3T")))
	if !IsDataPending(err) {
		t.Fatalf("not pending any more: %v", err)
	}
	if got := pendingDetail(err); got != "no such key: "+redact.Marker {
		t.Errorf("detail %q", got)
	}
}
