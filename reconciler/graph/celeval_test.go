package graph

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kroscope/kroscope/reconciler/graph/cellib"
)

// TestEvalCEL: a standalone expression sees vars and the runtime
// variable, converts as a template field does, and says when it did not
// compile.
func TestEvalCEL(t *testing.T) {
	vars := Vars{"obj": map[string]any{"status": map[string]any{"conditions": []any{
		map[string]any{"type": "Ready", "status": "True"},
	}}}}
	for src, want := range map[string]any{
		`obj.status.conditions.size() + 1`:       int64(2),
		`runtime.condition(obj, "Ready").status`: "True",
		`[omit()]`:                               []any{cellib.Omitted{}},
	} {
		got, err := EvalCEL(src, vars)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, %v; want %#v", src, got, err, want)
		}
	}
	for src, want := range map[string]string{
		`nope + 1`:          "compile: column 1: ",
		`obj.spec.replicas`: "data pending: no such key: spec",
		`b"x"`:              "unsupported type: bytes",
	} {
		if _, err := EvalCEL(src, vars); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: error %v, want it to start with %q", src, err, want)
		}
	}
}
