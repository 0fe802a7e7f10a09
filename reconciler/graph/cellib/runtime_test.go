package cellib

import (
	"reflect"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
)

func runtimeEnv(t *testing.T) *cel.Env {
	t.Helper()
	env := testEnv(t, Runtime(), cel.Variable("schema", cel.DynType))
	env, err := env.Extend(ConditionTypes(env))
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// TestRuntimeConditions: newCondition builds a condition from its map
// literal, runtime.condition finds one in obj.status.conditions (or gives
// an empty one), and the fields read back; bad literals fail to compile
// and bad values fail at run time, with kro's rules.
func TestRuntimeConditions(t *testing.T) {
	env := runtimeEnv(t)
	schema := map[string]any{"status": map[string]any{"conditions": []any{
		map[string]any{"type": "Ready", "status": "True", "reason": "Ready", "message": "ok"},
	}}}
	vars := map[string]any{"runtime": RuntimeValue, "schema": schema}
	cases := []struct {
		expr       string
		want       []Condition
		field      string
		wantErr    string
		compileErr string
	}{
		{expr: `runtime.newCondition({type: "DBReady", status: "True", reason: "Up", message: "db is up"})`,
			want: []Condition{{"DBReady", "True", "Up", "db is up"}}},
		{expr: `runtime.newCondition({status: "False", type: "X"})`, want: []Condition{{"X", "False", "", ""}}},
		{expr: `[runtime.newCondition({type: "A", status: "True"}), runtime.newCondition({type: "B", status: "Unknown"})]`,
			want: []Condition{{"A", "True", "", ""}, {"B", "Unknown", "", ""}}},
		{expr: `runtime.condition(schema, "Ready")`, want: []Condition{{"Ready", "True", "Ready", "ok"}}},
		{expr: `runtime.condition(schema, "Missing")`, want: []Condition{{}}},
		{expr: `runtime.condition(schema, "Ready").status`, field: "True"},
		{expr: `runtime.condition(schema, "Missing").reason`, field: ""},
		{expr: `runtime.newCondition({type: "T", status: runtime.condition(schema, "Ready").status, reason: "Copied"}).status`, field: "True"},
		{expr: `runtime.newCondition({type: "T", status: "Maybe"})`, wantErr: "status must be one of True, False, Unknown"},
		{expr: `runtime.newCondition({type: "", status: "True"})`, wantErr: "type must not be empty"},
		{expr: `runtime.newCondition({type: "T"})`, compileErr: "'status' is required"},
		{expr: `runtime.newCondition({status: "True"})`, compileErr: "'type' is required"},
		{expr: `runtime.newCondition({type: "T", status: "True", color: "x"})`, compileErr: `unknown key "color"`},
		{expr: `runtime.newCondition({"type": "T", status: "True"})`, compileErr: "keys must be bare identifiers"},
		{expr: `runtime.newCondition({type: "T", type: "U", status: "True"})`, compileErr: `duplicate key "type"`},
		{expr: `runtime.newCondition(schema)`, compileErr: "argument must be a map literal"},
		// The literal is a map(string, dyn) and the overload takes
		// map(string, string): cel-go checks a map's value type on whichever
		// entry it meets first, so this fails either in dispatch or in
		// newCondition itself (kro declares it the same way). Both refuse it.
		{expr: `runtime.newCondition({type: "T", status: 1})`, wantErr: "status must be a string|no such overload"},
		{expr: `runtime.condition(schema, "Ready").color`, compileErr: "undefined field 'color'"},
	}
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			a, iss := env.Compile(tc.expr)
			if tc.compileErr != "" {
				if iss == nil || iss.Err() == nil || !strings.Contains(iss.Err().Error(), tc.compileErr) {
					t.Fatalf("compile error %v; want %q", iss.Err(), tc.compileErr)
				}
				return
			}
			if iss.Err() != nil {
				t.Fatal(iss.Err())
			}
			prg, err := env.Program(a)
			if err != nil {
				t.Fatal(err)
			}
			out, _, err := prg.Eval(vars)
			if tc.wantErr != "" {
				if err == nil || !containsAny(err.Error(), strings.Split(tc.wantErr, "|")) {
					t.Fatalf("= %v, %v; want error %q", out, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == nil {
				if out.Value() != tc.field {
					t.Fatalf("= %#v, want %q", out.Value(), tc.field)
				}
				return
			}
			got, err := Conditions(out)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("= %+v, want %+v", got, tc.want)
			}
		})
	}
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
