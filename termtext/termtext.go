// Package termtext makes untrusted text safe to print on a terminal.
// Names, messages and values come from graphs and instances written by
// other people: a raw escape sequence in one of them could move the
// cursor, retitle the window or hide lines of `kroscope validate` or a log.
package termtext

import (
	"fmt"
	"io"
	"strings"
	"unicode"
)

// Escape returns s with every control character except newline and tab
// written as a Go escape (\x1b, \r, \u009b); other text is unchanged.
func Escape(s string) string { return escape(s, false) }

// EscapeLine is Escape that also escapes newlines and tabs: the result
// is one line.
func EscapeLine(s string) string { return escape(s, true) }

func escape(s string, line bool) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return needsEscape(r, line) }) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if !needsEscape(r, line) {
			b.WriteRune(r)
			continue
		}
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// needsEscape: C0 and C1 controls and DEL, and the bidirectional
// overrides that reorder what is shown.
func needsEscape(r rune, line bool) bool {
	if r == '\n' || r == '\t' {
		return line
	}
	if unicode.IsControl(r) {
		return true
	}
	switch r {
	case '\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069':
		return true
	}
	return false
}

// Unsafe reports whether Escape rewrites r: a control character other
// than newline and tab, or a bidirectional override.
func Unsafe(r rune) bool { return needsEscape(r, false) }

// Writer returns a writer that escapes what is written to w (see Escape).
func Writer(w io.Writer) io.Writer {
	if _, ok := w.(escaper); ok {
		return w
	}
	return escaper{w}
}

type escaper struct{ w io.Writer }

func (e escaper) Write(p []byte) (int, error) {
	s := Escape(string(p))
	if _, err := io.WriteString(e.w, s); err != nil {
		return 0, err
	}
	return len(p), nil
}
