package graph

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/kroscope/kroscope/reconciler/graph/cellib"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
}

// Error leads with the cause, after the short resource and field; the
// expression comes last and shortened (ExpressionRef), so a message cut
// to an Event's size still says what went wrong.
func (e *EvalError) Error() string {
	return "resource " + e.Resource + " field " + e.Path + ": " + e.Err.Error() + " (in " + ExpressionRef(e.Expression) + ")"
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
	v, err := toNative(out)
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

// toNative converts a CEL value into a JSON-like Go value. Its errors are
// kro's (pkg/cel/conversion), word for word: hack/celparity compares them.
func toNative(v ref.Val) (any, error) {
	switch val := v.(type) {
	case types.Null:
		return nil, nil
	case types.Bool:
		return bool(val), nil
	case types.Int:
		return int64(val), nil
	case types.Uint:
		if uint64(val) > math.MaxInt64 {
			return nil, fmt.Errorf("unsupported type: uint value %d overflows int64; convert it explicitly, e.g. string(...)", uint64(val))
		}
		return int64(val), nil
	case types.Double:
		return float64(val), nil
	case types.String:
		return string(val), nil
	case types.Bytes:
		return nil, errors.New("unsupported type: bytes value cannot be used directly in a resource template or status field; encode it explicitly, e.g. base64.encode(...)")
	// Written as Kubernetes writes them (kro does the same): Go's duration
	// text ("1h30m0s", not CEL's "5400s") and RFC 3339 in UTC to the second.
	case types.Duration:
		return metav1.Duration{Duration: val.Duration}.ToUnstructured(), nil
	case types.Timestamp:
		return metav1.Time{Time: val.Time}.ToUnstructured(), nil
	case *types.Optional:
		if !val.HasValue() {
			return nil, nil
		}
		return toNative(val.GetValue())
	case *types.Err:
		return nil, val
	}
	if cellib.IsOmit(v) {
		return cellib.Omitted{}, nil
	}
	if ml, ok := v.(traits.Mapper); ok {
		out := map[string]any{}
		it := ml.Iterator()
		for it.HasNext() == types.True {
			k := it.Next()
			ks, ok := k.(types.String)
			if !ok {
				return nil, fmt.Errorf("map key must be string, got %T", k.Value())
			}
			ev, err := toNative(ml.Get(k))
			if err != nil {
				return nil, err
			}
			out[string(ks)] = ev
		}
		return out, nil
	}
	if l, ok := v.(traits.Lister); ok {
		n, _ := l.Size().(types.Int)
		out := make([]any, 0, int(n))
		for i := types.Int(0); i < n; i++ {
			ev, err := toNative(l.Get(i))
			if err != nil {
				return nil, err
			}
			out = append(out, ev)
		}
		return out, nil
	}
	// Anything else (a quantity, URL, IP, CIDR, semver, type or condition)
	// is refused, as kro refuses it: a graph that wrote one here would
	// fail under kro. string(...) converts the ones that have a text form.
	return nil, fmt.Errorf("unsupported type: %s", v.Type().TypeName())
}
