package cellib

import "testing"

// TestJSON checks kro's encodings: sorted keys, Go's HTML escaping,
// integral doubles without a fraction, bytes as base64, durations and
// timestamps as Kubernetes writes them; unmarshal gives doubles.
func TestJSON(t *testing.T) {
	runCases(t, testEnv(t), []evalCase{
		{expr: `json.marshal({"name": "test", "count": 42})`, want: `{"count":42,"name":"test"}`},
		{expr: `json.marshal({'b': [1, 2.5, true, null], 'a': {'z': 'y'}})`, want: `{"a":{"z":"y"},"b":[1,2.5,true,null]}`},
		{expr: `json.marshal([1, 2, 3])`, want: `[1,2,3]`},
		{expr: `json.marshal([])`, want: `[]`},
		{expr: `json.marshal("hello")`, want: `"hello"`},
		{expr: `json.marshal('<&>')`, want: `"\u003c\u0026\u003e"`},
		{expr: `json.marshal(1.0)`, want: `1`},
		{expr: `json.marshal(null)`, want: `null`},
		{expr: `json.marshal(optional.none())`, want: `null`},
		{expr: `json.marshal(b'hello')`, want: `"aGVsbG8="`},
		{expr: `json.marshal(18446744073709551615u)`, want: `18446744073709551615`},
		{expr: `json.marshal(duration('90m'))`, want: `"1h30m0s"`},
		{expr: `json.marshal(timestamp('2024-01-02T03:04:05Z'))`, want: `"2024-01-02T03:04:05Z"`},
		{expr: `json.marshal(json.unmarshal('{"name":"test","count":42}'))`, want: `{"count":42,"name":"test"}`},
		// kro's words: the key's Go type.
		{expr: `json.marshal({1: 'a'})`, wantErr: "json.marshal failed to convert value: map key must be string, got int64"},
		{expr: `json.marshal({2u: 'a'})`, wantErr: "map key must be string, got uint64"},
		{expr: `json.unmarshal('{"a": 1}').a`, want: float64(1)},
		{expr: `json.unmarshal('[1, 2, 3]')[1]`, want: float64(2)},
		{expr: `json.unmarshal('{"nested": {"value": "deep"}}').nested.value`, want: "deep"},
		{expr: `json.unmarshal('true')`, want: true},
		{expr: `json.unmarshal('null') == null`, want: true},
		{expr: `json.unmarshal('{invalid')`, wantErr: "json.unmarshal failed to parse JSON"},
		{expr: `json.unmarshal('')`, wantErr: "failed to parse JSON"},
		{expr: `json.unmarshal(123)`, compileErr: true},
	})
}
