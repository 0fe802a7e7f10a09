package packed

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"
	"sigs.k8s.io/json"
)

// cborCases are JSON documents as objects hold them once decoded (int64
// and float64 kept apart), chosen for every head size of strings, lists,
// maps and integers, and for key orders where length and bytes disagree.
var cborCases = []string{
	`null`, `true`, `false`, `0`, `23`, `24`, `255`, `256`, `65535`, `65536`, `4294967295`, `4294967296`,
	`9223372036854775807`, `-1`, `-24`, `-25`, `-256`, `-257`, `-9223372036854775808`,
	`1.5`, `0.1`, `-2.5e300`, `65504.0`, `1e-7`,
	`""`, `"a"`, `"héllo ✓"`, `"` + strings.Repeat("x", 23) + `"`, `"` + strings.Repeat("x", 24) + `"`,
	`"` + strings.Repeat("y", 255) + `"`, `"` + strings.Repeat("y", 256) + `"`, `"` + strings.Repeat("z", 70000) + `"`,
	`[]`, `{}`, `[1,"a",null,[true,{}]]`,
	`{"b":1,"a":2,"aa":3,"B":4,"ä":5,"` + strings.Repeat("k", 24) + `":6,"` + strings.Repeat("j", 23) + `":7,"":8}`,
	`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"blog-a","namespace":"demo","labels":{"kro.run/owned":"true"},
	  "managedFields":[{"manager":"kroscope","operation":"Apply","fieldsV1":{"f:data":{"f:k":{}}}}]},"data":{"k":"v","n":"1"}}`,
}

// Every case encodes to the bytes direct.Marshal gives, and decodes back
// to what was encoded; so do values of other Go types (given to direct).
func TestAppendCBORMatchesDirect(t *testing.T) {
	var many []any
	for i := range 30 {
		many = append(many, map[string]any{strings.Repeat("k", i): int64(i)})
	}
	values := []any{
		many, int(-7), int32(1 << 20), math.MaxInt64,
		map[string]string{"b": "1", "a": "2"}, []string{"x", "y"}, float32(0.5),
	}
	for _, c := range cborCases {
		var v any
		if err := json.UnmarshalCaseSensitivePreserveInts([]byte(c), &v); err != nil {
			t.Fatalf("%.40s: %v", c, err)
		}
		values = append(values, v)
	}
	for _, v := range values {
		want, wantErr := direct.Marshal(v)
		got, err := appendCBOR(nil, v)
		if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
			t.Errorf("%.60v: appendCBOR = %x, %v\ndirect.Marshal = %x, %v", v, got, err, want, wantErr)
		}
	}
}

// A float that direct refuses (NaN) is refused here too, inside a map.
func TestAppendCBORRefusesWhatDirectRefuses(t *testing.T) {
	if _, err := appendCBOR(nil, map[string]any{"x": math.NaN()}); err == nil {
		t.Error("NaN encoded without error")
	}
}

func FuzzAppendCBOR(f *testing.F) {
	for _, c := range cborCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		var v any
		if json.UnmarshalCaseSensitivePreserveInts(doc, &v) != nil {
			return
		}
		want, wantErr := direct.Marshal(v)
		got, err := appendCBOR(nil, v)
		if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
			t.Errorf("%s: appendCBOR = %x, %v; direct.Marshal = %x, %v", doc, got, err, want, wantErr)
		}
	})
}

// BenchmarkPackChild packs a child as the object cache keeps it (what
// the API server returned for an apply, field sets slimmed).
func BenchmarkPackChild(b *testing.B) {
	var obj map[string]any
	doc := `{"apiVersion":"v1","kind":"ConfigMap","data":{"key":"value-0","n":"1"},"metadata":{"name":"app-0-a","namespace":"bench",
	"uid":"0b6c7d3e-0c4e-4d4c-9a3f-1a2b3c4d5e6f","resourceVersion":"123456","creationTimestamp":"2026-12-02T12:00:00Z",
	"labels":{"app.kubernetes.io/managed-by":"kroscope","kro.run/owned":"true","kro.run/instance-name":"app-0","kro.run/instance-namespace":"bench",
	"kro.run/instance-id":"6f5e4d3c-2b1a-4c3d-9e8f-7a6b5c4d3e2f","kro.run/resource-graph-definition-name":"chain","kro.run/node-id":"a",
	"applyset.kubernetes.io/part-of":"applyset-abcdefghijklmnopqrstuvwxyz0123456789-v1"},
	"annotations":{"kroscope.dev/desired-hash":"0123456789abcdef","kro.run/apply-order":"0"},
	"ownerReferences":[{"apiVersion":"kro.run/v1alpha1","kind":"Chain","name":"app-0","uid":"6f5e4d3c-2b1a-4c3d-9e8f-7a6b5c4d3e2f"}],
	"managedFields":[{"manager":"kroscope","operation":"Apply","apiVersion":"v1","time":"2026-12-02T12:00:00Z","fieldsType":"FieldsV1"}]}}`
	if err := json.UnmarshalCaseSensitivePreserveInts([]byte(doc), &obj); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Pack(obj); err != nil {
			b.Fatal(err)
		}
	}
}
