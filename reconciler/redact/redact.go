// Package redact removes Secret values from messages. A Set is filled
// with the values of the Secrets one reconcile reads; every message that
// leaves the reconciler (status conditions, Events, logs, the engine's
// observation, the returned error) goes through it, whatever produced the
// message: a CEL error, an API server's rejection, kroscope's own words.
package redact

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Marker replaces a Secret's value in a message.
const Marker = "(redacted: read from a Secret)"

// MinLen is the shortest value redacted: shorter ones ("1", "yes", "")
// occur in almost every message, and hiding them would hide the message
// while saying little about the Secret.
const MinLen = 4

// Set holds the Secret values to remove. The zero value is empty and ready;
// a nil *Set redacts nothing. It is safe for concurrent use.
type Set struct {
	mu     sync.RWMutex
	seen   map[string]bool
	values []string // longest first: the longest match at a position wins
}

// AddSecret adds the values of obj when it is a core v1 Secret: each of
// data's values as stored (base64) and decoded, and each of stringData's
// values with its stored (base64) form. Other objects add nothing.
func (s *Set) AddSecret(obj map[string]any) {
	if s == nil || !IsSecret(obj) {
		return
	}
	var vals []string
	if data, ok := obj["data"].(map[string]any); ok {
		for _, v := range data {
			if enc, ok := v.(string); ok {
				vals = append(vals, enc)
				if dec, err := base64.StdEncoding.DecodeString(enc); err == nil {
					vals = append(vals, string(dec))
				}
			}
		}
	}
	if data, ok := obj["stringData"].(map[string]any); ok {
		for _, v := range data {
			if str, ok := v.(string); ok {
				vals = append(vals, str, base64.StdEncoding.EncodeToString([]byte(str)))
			}
		}
	}
	s.add(vals)
}

// IsSecret reports whether obj is a core v1 Secret.
func IsSecret(obj map[string]any) bool {
	return obj["kind"] == "Secret" && obj["apiVersion"] == "v1"
}

// add records vals, each also in the escaped forms messages print it in:
// Go's %q (API server field errors, fmt) and JSON's.
func (s *Set) add(vals []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	grew := false
	for _, v := range vals {
		for _, form := range forms(v) {
			if len(form) < MinLen || s.seen[form] {
				continue
			}
			if s.seen == nil {
				s.seen = map[string]bool{}
			}
			s.seen[form], grew = true, true
			s.values = append(s.values, form)
		}
	}
	if grew {
		slices.SortStableFunc(s.values, func(a, b string) int { return len(b) - len(a) })
	}
}

// forms is v as it may appear in a message: itself, and the inside of its
// Go and JSON quotations when they differ.
func forms(v string) []string {
	out := []string{v}
	if q := strconv.Quote(v); q[1:len(q)-1] != v {
		out = append(out, q[1:len(q)-1])
	}
	if j, err := json.Marshal(v); err == nil && string(j[1:len(j)-1]) != v {
		out = append(out, string(j[1:len(j)-1]))
	}
	return out
}

// Empty reports whether the set holds no value.
func (s *Set) Empty() bool {
	if s == nil {
		return true
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.values) == 0
}

// String returns msg with every occurrence of every value replaced by
// Marker. Overlapping occurrences (one value ends inside another) are
// replaced as one span, so no part of either shows. Text inside a Marker
// already there is left alone, so redacting twice changes nothing.
func (s *Set) String(msg string) string {
	if s == nil {
		return msg
	}
	s.mu.RLock()
	spans := s.spans(msg)
	s.mu.RUnlock()
	if len(spans) == 0 {
		return msg
	}
	var b strings.Builder
	b.Grow(len(msg))
	last := 0
	for _, sp := range spans {
		b.WriteString(msg[last:sp[0]])
		b.WriteString(Marker)
		last = sp[1]
	}
	b.WriteString(msg[last:])
	return b.String()
}

// spans finds the merged, sorted byte ranges of msg to replace.
func (s *Set) spans(msg string) [][2]int {
	var found [][2]int
	for _, v := range s.values {
		if len(v) > len(msg) {
			continue
		}
		for from := 0; ; {
			i := strings.Index(msg[from:], v)
			if i < 0 {
				break
			}
			found = append(found, [2]int{from + i, from + i + len(v)})
			from += i + 1
		}
	}
	if len(found) == 0 {
		return nil
	}
	found = outsideMarkers(msg, found)
	slices.SortFunc(found, func(a, b [2]int) int { return a[0] - b[0] })
	merged := found[:0]
	for _, sp := range found {
		if n := len(merged); n > 0 && sp[0] <= merged[n-1][1] {
			merged[n-1][1] = max(merged[n-1][1], sp[1])
			continue
		}
		merged = append(merged, sp)
	}
	return merged
}

// outsideMarkers drops the spans that lie inside a Marker of msg.
func outsideMarkers(msg string, spans [][2]int) [][2]int {
	var marks [][2]int
	for from := 0; ; {
		i := strings.Index(msg[from:], Marker)
		if i < 0 {
			break
		}
		marks = append(marks, [2]int{from + i, from + i + len(Marker)})
		from += i + len(Marker)
	}
	if len(marks) == 0 {
		return spans
	}
	return slices.DeleteFunc(spans, func(sp [2]int) bool {
		for _, m := range marks {
			if sp[0] >= m[0] && sp[1] <= m[1] {
				return true
			}
		}
		return false
	})
}
