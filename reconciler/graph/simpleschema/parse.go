package simpleschema

import (
	"fmt"
	"strings"
	"unicode"
)

// Marker is one `key=value` pair after the `|` of a field definition.
type Marker struct {
	Key   string
	Value string
	// Quoted is true when the value was written in double quotes; a quoted
	// default of a string field is taken as is, even when empty.
	Quoted bool
}

// FieldSpec is a parsed field definition `"<type> | marker=value ..."`.
type FieldSpec struct {
	Type    string
	Markers []Marker
}

// ParseField splits a field definition on its FIRST `|` into the type and
// the markers. Marker values may be bare words, "double quoted" strings
// (only \" and \\ are escapes; other backslashes are kept, so regular
// expressions read naturally), or JSON written in [...] / {...}, which may
// contain spaces.
func ParseField(s string) (FieldSpec, error) {
	typ, rest, hasMarkers := strings.Cut(s, "|")
	fs := FieldSpec{Type: strings.TrimSpace(typ)}
	if fs.Type == "" {
		return fs, fmt.Errorf("missing type in %q", s)
	}
	if !hasMarkers {
		return fs, nil
	}
	if strings.TrimSpace(rest) == "" {
		return fs, fmt.Errorf("nothing after '|' in %q: write markers like `required=true` or remove the '|'", s)
	}
	markers, err := parseMarkers(rest)
	if err != nil {
		return fs, err
	}
	fs.Markers = markers
	return fs, nil
}

// parseMarkers reads whitespace-separated key=value pairs.
func parseMarkers(s string) ([]Marker, error) {
	var out []Marker
	i := 0
	for {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i == len(s) {
			return out, nil
		}
		start := i
		for i < len(s) && s[i] != '=' && !isSpace(s[i]) {
			i++
		}
		key := s[start:i]
		if i == len(s) || s[i] != '=' {
			return nil, fmt.Errorf("marker %q has no value: write %s=VALUE", key, key)
		}
		if !isIdent(key) {
			return nil, fmt.Errorf("invalid marker name %q: marker names are letters only", key)
		}
		i++ // '='
		m := Marker{Key: key}
		var err error
		switch {
		case i == len(s) || isSpace(s[i]):
			// An empty value, as kro reads it (`default=` is the empty
			// string); each marker decides whether it means anything.
		case s[i] == '"':
			m.Quoted = true
			m.Value, i, err = readQuoted(s, i)
		case s[i] == '[' || s[i] == '{':
			m.Value, i, err = readBracketed(s, i)
		default:
			start := i
			for i < len(s) && !isSpace(s[i]) {
				i++
			}
			m.Value = s[start:i]
		}
		if err != nil {
			return nil, fmt.Errorf("marker %q: %w", key, err)
		}
		if i < len(s) && !isSpace(s[i]) {
			return nil, fmt.Errorf("marker %q: unexpected %q after the value; separate markers with spaces", key, s[i:i+1])
		}
		out = append(out, m)
	}
}

// readQuoted reads a "..." value starting at s[i] == '"'; it returns the
// unescaped text and the index after the closing quote.
func readQuoted(s string, i int) (string, int, error) {
	var b strings.Builder
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			if j+1 < len(s) && (s[j+1] == '"' || s[j+1] == '\\') {
				b.WriteByte(s[j+1])
				j++
				continue
			}
			b.WriteByte('\\')
		case '"':
			return b.String(), j + 1, nil
		default:
			b.WriteByte(s[j])
		}
	}
	return "", 0, fmt.Errorf("unterminated quoted value %s", s[i:])
}

// readBracketed reads a JSON array or object starting at s[i]; brackets
// inside JSON strings do not count.
func readBracketed(s string, i int) (string, int, error) {
	var stack []byte
	inString := false
	for j := i; j < len(s); j++ {
		c := s[j]
		if inString {
			switch c {
			case '\\':
				j++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[':
			stack = append(stack, ']')
		case '{':
			stack = append(stack, '}')
		case ']', '}':
			if stack[len(stack)-1] != c {
				return "", 0, fmt.Errorf("mismatched %q in %s", c, s[i:j+1])
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return s[i : j+1], j + 1, nil
			}
		}
	}
	return "", 0, fmt.Errorf("unbalanced brackets in %s", s[i:])
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !unicode.IsLetter(r) || r > unicode.MaxASCII {
			return false
		}
	}
	return true
}
