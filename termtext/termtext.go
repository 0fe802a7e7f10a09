// Package termtext makes untrusted text safe to print on a terminal.
// Names, messages and values come from graphs, instances and Events
// written by other people: a raw escape sequence in one of them could
// move the cursor, retitle the window, plant a hyperlink or an image,
// make the terminal answer on stdin, or hide lines of a view or a log.
//
// Escaping the byte or rune that introduces a sequence (ESC, a C1
// control) makes the whole sequence inert: what follows it is printable
// text. Everything escaped is shown visibly, as a Go escape (\x1b, \r,
// \u009b, \u202e), never dropped: an operator sees that something was
// there. The escape is not reversible (the text `\x1b` and an ESC look
// the same), as kubectl's own terminal escaping is not.
package termtext

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// mode says which layout characters survive.
type mode uint8

const (
	keepNewlineTab mode = iota // Escape: output streams
	keepNewline                // Inert: a view, where a tab breaks the cell count
	keepNothing                // EscapeLine: one line
)

// Escape returns s with every control character except newline and tab,
// every invalid UTF-8 byte and every bidirectional formatting character
// written as a visible escape; other text is unchanged. It is for output
// streams (a log, `kroscope validate`), where a tab lines up columns.
func Escape(s string) string { return escape(s, keepNewlineTab) }

// Inert is Escape that also escapes tabs: the text for a frame of the
// TUI, where a tab would move the cursor by a width no layout counted.
// Newlines stay (views wrap and split multi-line messages themselves).
func Inert(s string) string { return escape(s, keepNewline) }

// EscapeLine is Escape that also escapes newlines and tabs: the result
// is one line.
func EscapeLine(s string) string { return escape(s, keepNothing) }

func escape(s string, m mode) string {
	if clean(s, m) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			// A byte that is no UTF-8: 0x9b alone is CSI to a terminal
			// that reads 8-bit controls.
			fmt.Fprintf(&b, `\x%02x`, s[i])
			i++
			continue
		}
		i += size
		if !needsEscape(r, m) {
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
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			// \u, not \x: inside a JSON string the escape decodes to
			// the same rune, so JSON output stays valid.
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// clean reports whether s needs no escaping: the common case, checked
// without allocating.
func clean(s string, m mode) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			continue
		}
		if c < utf8.RuneSelf {
			if needsEscape(rune(c), m) {
				return false
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || needsEscape(r, m) {
			return false
		}
		i += size - 1
	}
	return true
}

// needsEscape: C0 and C1 controls and DEL, the bidirectional formatting
// characters that reorder or re-direct what is shown (embeddings,
// overrides, isolates and the marks), and the Unicode line and paragraph
// separators, which some terminals and width tables treat as line breaks.
func needsEscape(r rune, m mode) bool {
	switch r {
	case '\n':
		return m == keepNothing
	case '\t':
		return m != keepNewlineTab
	}
	if unicode.IsControl(r) {
		return true
	}
	return bidi(r) || r == '\u2028' || r == '\u2029'
}

func bidi(r rune) bool {
	switch {
	case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069':
		return true
	case r == '\u200e', r == '\u200f', r == '\u061c':
		return true
	}
	return false
}

// Unsafe reports whether Escape rewrites r: a control character other
// than newline and tab, a bidirectional formatting character or a line
// or paragraph separator.
func Unsafe(r rune) bool { return needsEscape(r, keepNewlineTab) }

// Writer returns a writer that escapes what is written to w (see
// Escape). A rune split across two writes is joined before it is judged,
// so a C1 control cannot pass as two halves.
func Writer(w io.Writer) io.Writer {
	if _, ok := w.(*escaper); ok {
		return w
	}
	return &escaper{w: w}
}

type escaper struct {
	mu   sync.Mutex
	w    io.Writer
	tail []byte // the start of a rune the last write cut
}

func (e *escaper) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	buf := p
	if len(e.tail) > 0 {
		buf = append(e.tail, p...)
		e.tail = nil
	}
	// Keep back an incomplete rune at the end (at most 3 bytes).
	if cut := incompleteTail(buf); cut > 0 {
		e.tail = append([]byte(nil), buf[len(buf)-cut:]...)
		buf = buf[:len(buf)-cut]
	}
	if _, err := io.WriteString(e.w, Escape(string(buf))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// incompleteTail is how many bytes at the end of b start a rune that is
// not complete yet.
func incompleteTail(b []byte) int {
	for n := 1; n <= 3 && n <= len(b); n++ {
		c := b[len(b)-n]
		if c < utf8.RuneSelf {
			return 0
		}
		if utf8.RuneStart(c) {
			if utf8.FullRune(b[len(b)-n:]) {
				return 0
			}
			return n
		}
	}
	return 0
}
