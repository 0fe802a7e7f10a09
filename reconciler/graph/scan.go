package graph

import (
	"fmt"
	"strings"
)

// Segment is one part of a scanned string: literal text or a CEL expression
// (without its ${ } delimiters).
type Segment struct {
	Text string
	Expr bool
	// Offset is the byte position of the segment in the input (for an
	// expression, the position of its "${").
	Offset int
}

// ScanError is a malformed ${...} in a string, with the byte position.
type ScanError struct {
	Offset  int
	Message string
}

func (e *ScanError) Error() string { return fmt.Sprintf("at position %d: %s", e.Offset, e.Message) }

// Scan splits s into literal text and ${...} expressions. The end of an
// expression is the "}" that balances its "{", counting braces outside CEL
// string literals ('...', "...", triple-quoted and raw forms), so map
// literals and strings holding "}" or "${" work. A "${" inside an
// expression but outside a string literal is an error, as is an
// expression that is never closed or is empty.
func Scan(s string) ([]Segment, error) {
	var segs []Segment
	textStart := 0
	for i := 0; i < len(s); {
		if !strings.HasPrefix(s[i:], "${") {
			i++
			continue
		}
		end, err := scanExpr(s, i+2)
		if err != nil {
			return nil, err
		}
		if i > textStart {
			segs = append(segs, Segment{Text: s[textStart:i], Offset: textStart})
		}
		body := s[i+2 : end]
		if strings.TrimSpace(body) == "" {
			return nil, &ScanError{Offset: i, Message: "empty expression ${}"}
		}
		segs = append(segs, Segment{Text: body, Expr: true, Offset: i})
		i = end + 1
		textStart = i
	}
	if textStart < len(s) {
		segs = append(segs, Segment{Text: s[textStart:], Offset: textStart})
	}
	return segs, nil
}

// scanExpr returns the index of the "}" closing the expression whose body
// starts at start.
func scanExpr(s string, start int) (int, error) {
	depth := 0
	for i := start; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\'':
			end, err := skipString(s, i)
			if err != nil {
				return 0, err
			}
			i = end
			continue
		case (c == 'r' || c == 'R') && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\'') && !identChar(prev(s, i)):
			end, err := skipString(s, i+1)
			if err != nil {
				return 0, err
			}
			i = end
			continue
		case c == '$' && i+1 < len(s) && s[i+1] == '{':
			return 0, &ScanError{Offset: i, Message: "nested expressions are not allowed unless inside string literals"}
		case c == '{':
			depth++
		case c == '}':
			if depth == 0 {
				return i, nil
			}
			depth--
		}
		i++
	}
	return 0, &ScanError{Offset: start - 2, Message: "unterminated expression: ${ has no matching }"}
}

// skipString returns the index just after the CEL string literal starting
// at s[i] (a quote). Raw strings are handled by the caller only to skip
// the prefix: escapes in them are then still honoured, which can only make
// a raw string that ends in a backslash look unterminated.
func skipString(s string, i int) (int, error) {
	q := s[i]
	raw := i > 0 && (s[i-1] == 'r' || s[i-1] == 'R') && !identChar(prev(s, i-1))
	if strings.HasPrefix(s[i:], strings.Repeat(string(q), 3)) {
		delim := strings.Repeat(string(q), 3)
		for j := i + 3; j < len(s); j++ {
			if s[j] == '\\' && !raw {
				j++
				continue
			}
			if strings.HasPrefix(s[j:], delim) {
				return j + 3, nil
			}
		}
		return 0, &ScanError{Offset: i, Message: "unterminated string literal in expression"}
	}
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			if !raw {
				j++
			}
		case q:
			return j + 1, nil
		case '\n':
			return 0, &ScanError{Offset: i, Message: "unterminated string literal in expression"}
		}
	}
	return 0, &ScanError{Offset: i, Message: "unterminated string literal in expression"}
}

func prev(s string, i int) byte {
	if i == 0 {
		return ' '
	}
	return s[i-1]
}

func identChar(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// isStandalone reports whether segs is exactly one expression.
func isStandalone(segs []Segment) bool { return len(segs) == 1 && segs[0].Expr }

// hasExpr reports whether any segment is an expression.
func hasExpr(segs []Segment) bool {
	for _, s := range segs {
		if s.Expr {
			return true
		}
	}
	return false
}
