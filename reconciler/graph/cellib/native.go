package cellib

import (
	"errors"
	"fmt"
	"math"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Target says what a CEL value is converted for; the targets differ only in
// what they can hold.
type Target int

const (
	// ForObject is a value written into a resource template or a status
	// field. Bytes and uints beyond int64 are refused with kro's errors
	// (pkg/cel/conversion) word for word, as hack/celparity checks; omit()
	// becomes Omitted.
	ForObject Target = iota
	// ForJSON is json.marshal's input: JSON text holds bytes (base64) and
	// any uint, so both are allowed; omit() is refused like any opaque value.
	ForJSON
)

// Native converts a CEL value into a JSON-like Go value: nil, bool, int64,
// uint64 (ForJSON only), float64, string, []byte (ForJSON only),
// map[string]any, []any, or Omitted (ForObject only). Durations and
// timestamps are written as Kubernetes writes them (kro does the same):
// Go's duration text ("1h30m0s", not CEL's "5400s") and RFC 3339 in UTC.
func Native(v ref.Val, to Target) (any, error) {
	if out, done, err := nativeScalar(v, to); done {
		return out, err
	}
	if to == ForObject && IsOmit(v) {
		return Omitted{}, nil
	}
	switch val := v.(type) {
	case traits.Mapper:
		return nativeMap(val, to)
	case traits.Lister:
		return nativeList(val, to)
	}
	// Anything else (a quantity, URL, IP, CIDR, semver, type or condition)
	// is refused, as kro refuses it: a graph that wrote one here would
	// fail under kro. string(...) converts the ones that have a text form.
	return nil, fmt.Errorf("unsupported type: %s", v.Type().TypeName())
}

// nativeScalar converts the values that hold no other value (and an
// optional, which holds at most one); done is false for anything else.
func nativeScalar(v ref.Val, to Target) (out any, done bool, err error) {
	switch val := v.(type) {
	case nil, types.Null:
		return nil, true, nil
	case types.Bool:
		return bool(val), true, nil
	case types.Int:
		return int64(val), true, nil
	case types.Uint:
		return nativeUint(val, to)
	case types.Double:
		return float64(val), true, nil
	case types.String:
		return string(val), true, nil
	case types.Bytes:
		if to == ForJSON {
			return []byte(val), true, nil
		}
		return nil, true, errors.New("unsupported type: bytes value cannot be used directly in a resource template or status field; encode it explicitly, e.g. base64.encode(...)")
	case types.Duration:
		return metav1.Duration{Duration: val.Duration}.ToUnstructured(), true, nil
	case types.Timestamp:
		return metav1.Time{Time: val.Time}.ToUnstructured(), true, nil
	case *types.Optional:
		if !val.HasValue() {
			return nil, true, nil
		}
		out, err := Native(val.GetValue(), to)
		return out, true, err
	case *types.Err:
		return nil, true, val
	}
	return nil, false, nil
}

// nativeUint keeps a uint for JSON; an object holds int64, as kro's do.
func nativeUint(u types.Uint, to Target) (any, bool, error) {
	switch {
	case to == ForJSON:
		return uint64(u), true, nil
	case uint64(u) > math.MaxInt64:
		return nil, true, fmt.Errorf("unsupported type: uint value %d overflows int64; convert it explicitly, e.g. string(...)", uint64(u))
	}
	return int64(u), true, nil
}

func nativeMap(m traits.Mapper, to Target) (map[string]any, error) {
	out := map[string]any{}
	for it := m.Iterator(); it.HasNext() == types.True; {
		k := it.Next()
		ks, ok := k.(types.String)
		if !ok {
			return nil, fmt.Errorf("map key must be string, got %T", k.Value())
		}
		e, err := Native(m.Get(k), to)
		if err != nil {
			return nil, err
		}
		out[string(ks)] = e
	}
	return out, nil
}

func nativeList(l traits.Lister, to Target) ([]any, error) {
	n, _ := l.Size().(types.Int)
	out := make([]any, 0, int(n))
	for i := types.Int(0); i < n; i++ {
		e, err := Native(l.Get(i), to)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}
