package cellib

import (
	"encoding/json"
	"fmt"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// JSON declares json.marshal(value) → string and json.unmarshal(string) →
// dyn, with encoding/json's output: sorted object keys, bytes as base64,
// durations as Go text ("1h0m0s"), timestamps as RFC 3339 in UTC, and
// every JSON number parsed as a double.
func JSON() cel.EnvOption {
	return library("kroscope.json",
		cel.Function("json.unmarshal",
			cel.Overload("json_unmarshal_string", []*cel.Type{cel.StringType}, cel.DynType,
				cel.UnaryBinding(func(v ref.Val) ref.Val {
					s, ok := v.(types.String)
					if !ok {
						return types.MaybeNoSuchOverloadErr(v)
					}
					var out any
					if err := json.Unmarshal([]byte(s), &out); err != nil {
						return types.NewErr("json.unmarshal failed to parse JSON: %s", err)
					}
					return types.DefaultTypeAdapter.NativeToValue(out)
				}))),
		cel.Function("json.marshal",
			cel.Overload("json_marshal_dyn", []*cel.Type{cel.DynType}, cel.StringType,
				cel.UnaryBinding(func(v ref.Val) ref.Val {
					native, err := jsonValue(v)
					if err != nil {
						return types.NewErr("json.marshal failed to convert value: %s", err)
					}
					b, err := json.Marshal(native)
					if err != nil {
						return types.NewErr("json.marshal failed to encode value: %s", err)
					}
					return types.String(b)
				}))),
	)
}

// jsonValue turns a CEL value into what encoding/json encodes the way kro
// does. Unlike the conversion into objects, bytes and large uints are
// allowed here: JSON text can hold them.
func jsonValue(v ref.Val) (any, error) {
	switch val := v.(type) {
	case nil, types.Null:
		return nil, nil
	case types.Bool:
		return bool(val), nil
	case types.Int:
		return int64(val), nil
	case types.Uint:
		return uint64(val), nil
	case types.Double:
		return float64(val), nil
	case types.String:
		return string(val), nil
	case types.Bytes:
		return []byte(val), nil
	case types.Duration:
		return metav1.Duration{Duration: val.Duration}.ToUnstructured(), nil
	case types.Timestamp:
		return metav1.Time{Time: val.Time}.ToUnstructured(), nil
	case *types.Optional:
		if !val.HasValue() {
			return nil, nil
		}
		return jsonValue(val.GetValue())
	case *types.Err:
		return nil, val
	}
	switch val := v.(type) {
	case traits.Mapper:
		out := map[string]any{}
		for it := val.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			ks, ok := k.(types.String)
			if !ok {
				return nil, fmt.Errorf("map key must be string, got %T", k.Value())
			}
			e, err := jsonValue(val.Get(k))
			if err != nil {
				return nil, err
			}
			out[string(ks)] = e
		}
		return out, nil
	case traits.Lister:
		out := []any{}
		for it := val.Iterator(); it.HasNext() == types.True; {
			e, err := jsonValue(it.Next())
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported type: %s", v.Type().TypeName())
}
