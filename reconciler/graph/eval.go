package graph

import (
	"errors"
	"fmt"
	"strings"

	"github.com/google/cel-go/common/types/ref"
	"github.com/kroscope/kroscope/reconciler/graph/cellib"
)

// Vars are the values expressions read: "schema" → the instance object
// (apiVersion, kind, metadata, spec; status removed), and each resource id →
// its observed object. All values are JSON-like Go values.
type Vars map[string]any

// ErrDataPending marks an evaluation that read a field, key or index that is
// not there yet (no such key/field/attribute, index out of bounds) or a
// resource not yet observed: the caller waits instead of failing.
var ErrDataPending = errors.New("data pending")

// IsDataPending reports whether err (or anything it wraps) is ErrDataPending.
func IsDataPending(err error) bool { return errors.Is(err, ErrDataPending) }

// EvalError is a CEL evaluation failure that is not data-pending; it names
// the resource (or "status"), the field path and the expression.
type EvalError struct {
	Resource   string
	Path       string
	Expression string
	Err        error
	// Subject, when set, names what was evaluated more precisely than
	// "resource <Resource>": one item of a collection.
	Subject string
}

// OnItem is the error with subject in the resource's place, so a
// collection's item is named once ("resource web item 0 (ns/web-0) field
// readyWhen[0]: ...") instead of wrapped around a message that names the
// resource again.
func OnItem(err error, subject string) error {
	var ee *EvalError
	if !errors.As(err, &ee) {
		return fmt.Errorf("%s: %w", subject, err)
	}
	c := *ee
	c.Subject = subject
	return &c
}

// Error leads with the cause, after the short resource and field; the
// expression comes last and shortened (ExpressionRef), so a message cut
// to an Event's size still says what went wrong.
func (e *EvalError) Error() string {
	subject := "resource " + e.Resource
	if e.Subject != "" {
		subject = e.Subject
	}
	return subject + " field " + e.Path + ": " + e.Err.Error() + " (in " + ExpressionRef(e.Expression) + ")"
}
func (e *EvalError) Unwrap() error { return e.Err }

// pendingError wraps ErrDataPending with what was missing.
type pendingError struct{ msg string }

func (e *pendingError) Error() string { return "data pending: " + e.msg }
func (e *pendingError) Unwrap() error { return ErrDataPending }

// pendingMarkers are CEL error texts that mean "not there yet".
var pendingMarkers = []string{"no such key", "no such field", "no such attribute", "index out of bounds"}

func classify(err error) error {
	msg := err.Error()
	for _, m := range pendingMarkers {
		if strings.Contains(msg, m) {
			return &pendingError{msg: msg}
		}
	}
	return err
}

// Eval evaluates the expression against vars and returns a JSON-like Go value
// (map[string]any, []any, int64, float64, string, bool, nil). Reading an id
// that is not in vars, or a missing key, field or index, returns an error
// wrapping ErrDataPending.
func (e *Expression) Eval(vars Vars) (any, error) {
	out, err := e.evalVal(vars)
	if err != nil {
		return nil, err
	}
	v, err := cellib.Native(out, cellib.ForObject)
	return v, e.redact(err)
}

// evalVal is Eval without the conversion to Go values.
func (e *Expression) evalVal(vars Vars) (ref.Val, error) {
	if e == nil {
		return nil, errors.New("nil expression")
	}
	prg, err := e.plan()
	if err != nil {
		return nil, err
	}
	for _, id := range e.References {
		if _, ok := vars[id]; !ok {
			return nil, &pendingError{msg: fmt.Sprintf("%s is not observed yet", id)}
		}
	}
	act := make(map[string]any, len(e.References)+1)
	for _, id := range e.References {
		act[id] = vars[id]
		if vs := e.valueSchemas[id]; vs != nil && vars[id] != nil {
			act[id] = readVal(vars[id], vs)
		}
	}
	out, _, err := e.limits.run(prg, act)
	if err != nil {
		if _, ok := err.(*LimitError); ok {
			return nil, err
		}
		return nil, e.redact(classify(err))
	}
	return out, nil
}
