package client

import (
	"encoding/json"
	"math"
	"testing"

	sigsjson "sigs.k8s.io/json"
)

// AppendJSON must write what json.Marshal writes, byte for byte: the
// desired-hash annotation on every child is computed from it, and the
// instance's patches are sent in it.
func TestAppendJSONIsEncodingJSON(t *testing.T) {
	values := []any{
		nil, true, false, "", "plain", `q"uote`, `back\slash`, "<b>&</b>", "tab\tnl\n", "\x00\x1f\x7f", "ünïcødé", "\u2028\u2029", "bad \xff utf8",
		int64(0), int64(-42), int64(math.MaxInt64), int(7), int32(-3), 0.0, 1.5, -2.25e-9, 1e21, 123456789.0, math.SmallestNonzeroFloat64,
		map[string]any(nil), []any(nil), map[string]any{}, []any{},
		map[string]any{"b": int64(1), "a": "x", "A": []any{"y", nil, map[string]any{"z<": 1.25}}, "": false, "é": "é"},
		[]any{map[string]any{"k": []any{int64(1), 2.5, "3"}}, []any{}, nil},
		json.Number("12.50"), map[string]string{"b": "1", "a": "2"},
	}
	for _, v := range values {
		want, werr := json.Marshal(v)
		got, gerr := AppendJSON(nil, v)
		if (werr != nil) != (gerr != nil) || string(got) != string(want) {
			t.Errorf("%#v:\n got %s (%v)\nwant %s (%v)", v, got, gerr, want, werr)
		}
		body, berr := EncodeJSON(v)
		if (berr != nil) != (werr != nil) || string(body) != string(want) {
			t.Errorf("EncodeJSON(%#v) = %s (%v), want %s", v, body, berr, want)
		}
	}
	if _, err := AppendJSON(nil, map[string]any{"nan": math.NaN()}); err == nil {
		t.Error("NaN encoded without an error, json.Marshal refuses it")
	}
}

// Objects as the API server's JSON decodes to them encode as json.Marshal
// encodes them.
func FuzzAppendJSON(f *testing.F) {
	for _, doc := range []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"kro.run/owned":"true"}},"data":{"k":"<v>"}}`,
		`[1,-2,3.5,1e300,"x\u2028",null,true,{"":{}}]`, `"\u00e9\ud83d\ude00"`, `9223372036854775807`, `{"b":[],"a":{"c":0.0}}`,
	} {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		var v any
		if sigsjson.UnmarshalCaseSensitivePreserveInts(doc, &v) != nil {
			return
		}
		want, werr := json.Marshal(v)
		got, gerr := AppendJSON(nil, v)
		if (werr != nil) != (gerr != nil) || string(got) != string(want) {
			t.Errorf("%s:\n got %s (%v)\nwant %s (%v)", doc, got, gerr, want, werr)
		}
	})
}
