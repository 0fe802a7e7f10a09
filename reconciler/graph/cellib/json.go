package cellib

import (
	"encoding/json"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
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
					native, err := Native(v, ForJSON)
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
