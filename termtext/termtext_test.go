package termtext

import (
	"bytes"
	"testing"
)

func TestEscape(t *testing.T) {
	cases := map[string]string{
		"plain name":             "plain name",
		"two\nlines\tand tab":    "two\nlines\tand tab",
		"red \x1b[31mX\x1b[0m":   `red \x1b[31mX\x1b[0m`,
		"title \x1b]0;pwned\x07": `title \x1b]0;pwned\x07`,
		"back\rover":             `back\rover`,
		"c1 \u009b2J":            `c1 \x9b2J`,
		"rtl \u202eevil":         `rtl \u202eevil`,
		"del \x7f":               `del \x7f`,
		"ünïcödé ✓ box ─":        "ünïcödé ✓ box ─",
	}
	for in, want := range cases {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
	if got := EscapeLine("a\nb\tc\x1b"); got != `a\nb\tc\x1b` {
		t.Errorf("EscapeLine = %q", got)
	}
	var buf bytes.Buffer
	w := Writer(&buf)
	if n, err := w.Write([]byte("x\x1b[2Jy\n")); err != nil || n != 7 {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if buf.String() != "x\\x1b[2Jy\n" {
		t.Errorf("written %q", buf.String())
	}
}
