package cellib

import (
	"reflect"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
)

// TestNative is the one CEL-to-Go conversion, for both targets: an object
// refuses what a Kubernetes object cannot hold (kro's errors), JSON text
// holds bytes and any uint; omit() means something only in an object.
func TestNative(t *testing.T) {
	env := testEnv(t, Omit())
	cases := []struct {
		expr    string
		to      Target
		want    any
		wantErr string
	}{
		{`{'a': [1, 2u, 2.5, true, null, 'x']}`, ForObject, map[string]any{"a": []any{int64(1), int64(2), 2.5, true, nil, "x"}}, ""},
		{`{'a': [1, 2u, 2.5, true, null, 'x']}`, ForJSON, map[string]any{"a": []any{int64(1), uint64(2), 2.5, true, nil, "x"}}, ""},
		{`duration('90m')`, ForObject, "1h30m0s", ""},
		{`timestamp('2024-01-02T03:04:05Z')`, ForJSON, "2024-01-02T03:04:05Z", ""},
		{`optional.none()`, ForObject, nil, ""},
		{`optional.of('v')`, ForJSON, "v", ""},
		{`[]`, ForObject, []any{}, ""},
		{`b'hi'`, ForObject, nil, "bytes value cannot be used directly"},
		{`b'hi'`, ForJSON, []byte("hi"), ""},
		{`18446744073709551615u`, ForObject, nil, "overflows int64"},
		{`18446744073709551615u`, ForJSON, uint64(18446744073709551615), ""},
		{`omit()`, ForObject, Omitted{}, ""},
		{`[omit()]`, ForObject, []any{Omitted{}}, ""},
		{`omit()`, ForJSON, nil, "unsupported type: kro.omit"},
		{`{1: 'a'}`, ForObject, nil, "map key must be string, got int64"},
		{`{1: 'a'}`, ForJSON, nil, "map key must be string, got int64"},
		{`type(1)`, ForObject, nil, "unsupported type: type"},
	}
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			a, iss := env.Compile(tc.expr)
			if iss.Err() != nil {
				t.Fatal(iss.Err())
			}
			prg, err := env.Program(a)
			if err != nil {
				t.Fatal(err)
			}
			v, _, err := prg.Eval(cel.NoVars())
			if err != nil {
				t.Fatal(err)
			}
			got, err := Native(v, tc.to)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Native(%d) = %#v, %v; want an error containing %q", tc.to, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Native(%d) = %#v, %v; want %#v", tc.to, got, err, tc.want)
			}
		})
	}
	if got, err := Native(nil, ForObject); got != nil || err != nil {
		t.Errorf("Native(nil) = %v, %v", got, err)
	}
}
