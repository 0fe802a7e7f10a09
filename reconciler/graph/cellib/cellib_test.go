package cellib

import (
	"reflect"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
)

// testEnv has the libraries under test plus cel-go's encoders (base64 to
// print digests) and optional types.
func testEnv(t *testing.T, extra ...cel.EnvOption) *cel.Env {
	t.Helper()
	opts := append([]cel.EnvOption{ext.Encoders(), cel.OptionalTypes(), Random(), Hash(), JSON(), Maps(), Lists()}, extra...)
	env, err := cel.NewEnv(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// evalCase is one expression with its expected native value (compared
// with reflect.DeepEqual on ref.Val.Value()), or the text its error holds.
type evalCase struct {
	expr    string
	want    any
	wantErr string
	// compileErr means the checker rejects the expression.
	compileErr bool
}

func runCases(t *testing.T, env *cel.Env, cases []evalCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			a, iss := env.Compile(tc.expr)
			if tc.compileErr {
				if iss == nil || iss.Err() == nil {
					t.Fatalf("compiled; want a compile error")
				}
				return
			}
			if iss != nil && iss.Err() != nil {
				t.Fatalf("compile: %v", iss.Err())
			}
			prg, err := env.Program(a)
			if err != nil {
				t.Fatal(err)
			}
			out, _, err := prg.Eval(cel.NoVars())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("= %v (err %v); want error containing %q", out, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("eval: %v", err)
			}
			if tc.want == nil {
				if out != types.NullValue {
					t.Fatalf("= %v, want null", out)
				}
				return
			}
			got, err := out.ConvertToNative(reflect.TypeOf(tc.want))
			if err != nil {
				t.Fatalf("= %v (%s): %v", out, out.Type().TypeName(), err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("= %#v, want %#v", got, tc.want)
			}
		})
	}
}
