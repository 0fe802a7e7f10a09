package plan

import (
	"encoding/base64"
	"reflect"
	"testing"

	"github.com/kroscope/kroscope/reconciler/redact"
)

func TestDiff(t *testing.T) {
	live := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "a", "resourceVersion": "7", "uid": "u", "generation": int64(2),
			"managedFields": []any{"x"}, "creationTimestamp": "t",
			"labels":      map[string]any{"app.kubernetes.io/name": "a"},
			"annotations": map[string]any{"kroscope.dev/desired-hash": "h1"}},
		"data":   map[string]any{"k": "v", "gone": "x", "list": []any{"a", "b"}},
		"status": map[string]any{"ready": true},
	}
	for _, tc := range []struct {
		name          string
		before, after map[string]any
		want          []Field
	}{
		{"same but noise", live, with(live, func(m map[string]any) {
			md := m["metadata"].(map[string]any)
			md["resourceVersion"], md["generation"] = "8", int64(3)
			md["annotations"] = map[string]any{"kroscope.dev/desired-hash": "h2"}
			m["status"] = map[string]any{"ready": false}
		}), nil},
		{"changed, added, removed", live, with(live, func(m map[string]any) {
			m["data"] = map[string]any{"k": "w", "new": "n", "list": []any{"a", "c"}}
		}), []Field{{Path: "data.gone", Op: "-", Old: "x"}, {Path: "data.k", Op: "~", Old: "v", New: "w"},
			{Path: "data.list[1]", Op: "~", Old: "b", New: "c"}, {Path: "data.new", Op: "+", New: "n"}}},
		{"list grows: one field", live, with(live, func(m map[string]any) {
			m["data"].(map[string]any)["list"] = []any{"a", "b", "c"}
		}), []Field{{Path: "data.list", Op: "~", Old: []any{"a", "b"}, New: []any{"a", "b", "c"}}}},
		{"label key quoted", live, with(live, func(m map[string]any) {
			m["metadata"].(map[string]any)["labels"] = map[string]any{"app.kubernetes.io/name": "b"}
		}), []Field{{Path: `metadata.labels["app.kubernetes.io/name"]`, Op: "~", Old: "a", New: "b"}}},
		{"create: every leaf added", nil, map[string]any{"kind": "ConfigMap", "metadata": map[string]any{"name": "a", "uid": "u"}},
			[]Field{{Path: "kind", Op: "+", New: "ConfigMap"}, {Path: "metadata.name", Op: "+", New: "a"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Diff(tc.before, tc.after)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Diff =\n%#v\nwant\n%#v", got, tc.want)
			}
		})
	}
}

// with returns a deep-enough copy of m changed by f.
func with(m map[string]any, f func(map[string]any)) map[string]any {
	cp := map[string]any{}
	for k, v := range m {
		if mm, ok := v.(map[string]any); ok {
			v = with(mm, func(map[string]any) {})
		}
		cp[k] = v
	}
	f(cp)
	return cp
}

func TestMask(t *testing.T) {
	red := &redact.Set{}
	red.AddSecret(map[string]any{"apiVersion": "v1", "kind": "Secret",
		"data": map[string]any{"pw": base64.StdEncoding.EncodeToString([]byte("hunter2-long"))}})
	for _, tc := range []struct {
		name   string
		in     Field
		secret bool
		want   Field
	}{
		{"secret data changed", Field{Path: "data.pw", Op: "~", Old: "YQ==", New: "Yg=="}, true, Field{Path: "data.pw", Op: "~", Old: Sensitive, New: Sensitive}},
		{"secret stringData added", Field{Path: `stringData["a.b"]`, Op: "+", New: "x"}, true, Field{Path: `stringData["a.b"]`, Op: "+", New: Sensitive}},
		{"secret label shown", Field{Path: "metadata.labels.a", Op: "+", New: "x"}, true, Field{Path: "metadata.labels.a", Op: "+", New: "x"}},
		{"dataX is not data", Field{Path: "dataX", Op: "+", New: "x"}, true, Field{Path: "dataX", Op: "+", New: "x"}},
		{"secret-derived value elsewhere", Field{Path: "data.url", Op: "+", New: "postgres://u:hunter2-long@db"}, false,
			Field{Path: "data.url", Op: "+", New: "postgres://u:" + redact.Marker + "@db"}},
		{"ordinary value", Field{Path: "data.k", Op: "~", Old: "a", New: "b"}, false, Field{Path: "data.k", Op: "~", Old: "a", New: "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Mask([]Field{tc.in}, tc.secret, red)
			if !reflect.DeepEqual(got[0], tc.want) {
				t.Errorf("Mask = %#v, want %#v", got[0], tc.want)
			}
		})
	}
}

func TestSummaryAndExitCode(t *testing.T) {
	p := &Plan{Instances: []Instance{
		{Name: "a", Objects: []Object{{Op: OpCreate}, {Op: OpChange}, {Op: OpChange}, {Op: OpPending}}},
		{Name: "b", Objects: []Object{{Op: OpPrune}, {Op: OpFail}}},
		{Name: "c"},
	}}
	s := Summarize([]*Plan{p})
	if want := (Summary{Create: 1, Change: 2, Prune: 1, Fail: 1, Instances: 3}); s != want {
		t.Fatalf("Summarize = %+v, want %+v", s, want)
	}
	if got, want := s.Line(), "Plan: 1 to create, 2 to change, 1 to prune, across 3 instances; 1 would fail."; got != want {
		t.Errorf("Line = %q, want %q", got, want)
	}
	broken := &Plan{Schema: &Schema{Breaking: []string{"spec.x: removed"}}}
	for _, tc := range []struct {
		name string
		s    Summary
		err  error
		want int
	}{
		{"nothing", Summary{Instances: 4}, nil, 0},
		{"changes", s, nil, 2},
		{"only a pending object", Summarize([]*Plan{{Instances: []Instance{{Objects: []Object{{Op: OpPending}}}}}}), nil, 0},
		{"breaking schema alone", Summarize([]*Plan{broken}), nil, 2},
		{"error", s, errTest, 1},
	} {
		if got := ExitCode(tc.s, tc.err); got != tc.want {
			t.Errorf("%s: ExitCode = %d, want %d", tc.name, got, tc.want)
		}
	}
}

type testErr struct{}

func (testErr) Error() string { return "boom" }

var errTest error = testErr{}

func TestBookkeeping(t *testing.T) {
	for path, want := range map[string]bool{
		"apiVersion":                         true,
		"kind":                               true,
		"kindred":                            false,
		"metadata.ownerReferences":           true,
		`metadata.labels["kro.run/node-id"]`: true,
		`metadata.labels["app.kubernetes.io/managed-by"]`:      true,
		`metadata.labels["app.kubernetes.io/name"]`:            false,
		`metadata.annotations["internal.kro.run/apply-order"]`: true,
		"metadata.name": false,
		"data.k":        false,
	} {
		if got := Bookkeeping(path); got != want {
			t.Errorf("Bookkeeping(%s) = %v, want %v", path, got, want)
		}
	}
}
