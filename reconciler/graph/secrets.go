package graph

import (
	"errors"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kroscope/kroscope/reconciler/redact"
)

// Values read from a Secret must never reach an error message (and from
// there an instance's conditions, an Event, a log line or the TUI). An
// expression is sensitive when it reads a Secret, or a resource whose
// template reads one (its fields may carry the value on), or an iterator
// over such values. The errors of a sensitive expression have their quoted
// parts (where cel-go and strconv put values) and a missing map key that
// the expression does not spell (cel-go prints it unquoted) redacted; no
// error of any expression prints a result value, only its type. This hides
// values derived from a Secret (cut, changed in case); the reconciler also
// removes every Secret value it read from every message, whatever printed
// it (package redact).

// isSecretKind reports whether gvk is the core Secret.
func isSecretKind(gvk schema.GroupVersionKind) bool {
	return gvk.Group == "" && gvk.Kind == "Secret"
}

// markSensitive sets Expression.sensitive across g; TopologicalOrder must
// be set (every resource comes after what it reads).
func (g *Graph) markSensitive() {
	t := taint{}
	for _, id := range g.TopologicalOrder {
		if r := g.Resources[id]; r != nil {
			t.resource(r)
		}
	}
	for _, id := range g.TopologicalOrder {
		r := g.Resources[id]
		if r == nil {
			continue
		}
		for _, e := range r.ReadyWhen {
			// readyWhen reads the resource itself (or each of its items).
			markIf(e, t[id] || t.reads(e, nil))
		}
	}
	for _, f := range g.Status {
		for _, e := range f.Expressions {
			markIf(e, t.reads(e, nil))
		}
	}
	for _, e := range g.Conditions {
		markIf(e, t.reads(e, nil))
	}
}

// taint holds the ids of resources whose values may come from a Secret.
type taint map[string]bool

// resource marks r's forEach, includeWhen and template expressions that
// read a tainted value; r is tainted when it is a Secret or a template
// field reads one.
func (t taint) resource(r *Resource) {
	iterators := map[string]bool{}
	for _, d := range r.ForEach {
		if t.reads(d.Expression, nil) {
			iterators[d.Name] = true
			markIf(d.Expression, true)
		}
	}
	if isSecretKind(r.GVK) {
		t[r.ID] = true
	}
	for _, e := range r.IncludeWhen {
		markIf(e, t.reads(e, nil))
	}
	for _, f := range r.Fields {
		for _, e := range f.Expressions {
			if t.reads(e, iterators) {
				markIf(e, true)
				t[r.ID] = true
			}
		}
	}
}

// reads reports whether e reads a tainted resource or one of extra.
func (t taint) reads(e *Expression, extra map[string]bool) bool {
	if e == nil {
		return false
	}
	for _, ref := range e.References {
		if t[ref] || extra[ref] {
			return true
		}
	}
	return false
}

// markIf marks e sensitive when sensitive is true; it never unmarks.
func markIf(e *Expression, sensitive bool) {
	if e != nil && sensitive {
		e.sensitive = true
	}
}

// quoted matches the quoted parts of an error text.
var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")

// missingKey is cel-go's unquoted "no such key: <key>" (up to the end of
// its message).
var missingKey = regexp.MustCompile(`no such key: (.*)`)

// redactText hides the quoted parts of msg and a missing key that source
// does not spell.
func redactText(msg, source string) string {
	msg = quoted.ReplaceAllStringFunc(msg, func(q string) string {
		if celTypeNames[q[1:len(q)-1]] {
			return q // "from 'string' to 'int'" says nothing secret
		}
		return `"` + redact.Marker + `"`
	})
	return missingKey.ReplaceAllStringFunc(msg, func(m string) string {
		if key := m[len("no such key: "):]; key == "" || strings.Contains(source, key) || strings.Contains(key, redact.Marker) {
			return m // "creds.data.TOKEN: no such key: TOKEN" names a field, not a value
		}
		return "no such key: " + redact.Marker
	})
}

// redactedError hides the secret parts of an error from a sensitive
// expression (redactText); errors.Is and errors.As still see the original.
type redactedError struct {
	err    error
	source string
}

func (e *redactedError) Error() string { return redactText(e.err.Error(), e.source) }
func (e *redactedError) Unwrap() error { return e.err }

// redact wraps err when e is sensitive. A pending error is rebuilt
// instead: its detail is read from it directly (pendingDetail).
func (e *Expression) redact(err error) error {
	if err == nil || !e.sensitive {
		return err
	}
	var already *redactedError
	if errors.As(err, &already) {
		return err
	}
	var pe *pendingError
	if errors.As(err, &pe) && err == error(pe) {
		return &pendingError{msg: redactText(pe.msg, e.Source)}
	}
	return &redactedError{err: err, source: e.Source}
}

// Sensitive reports whether the expression reads a value from a Secret
// (directly or through another resource's fields).
func (e *Expression) Sensitive() bool { return e != nil && e.sensitive }
