package graph

import (
	"reflect"
	"strings"
	"testing"

	apiservercel "k8s.io/apiserver/pkg/cel"
)

// TestEnvironmentLibraries compiles and evaluates one expression per
// library the environment promises.
func TestEnvironmentLibraries(t *testing.T) {
	env, err := graphEnv(nil, []string{"config"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	vars := Vars{
		"schema": map[string]any{"spec": map[string]any{
			"name": "web", "tags": []any{"a", "bb"}, "labels": map[string]any{"k": "v"},
		}},
		"config": map[string]any{"data": map[string]any{"x": "1"}},
	}
	tests := []struct {
		expr string
		want any
		refs []string
	}{
		{`cel.bind(n, schema.spec.name, n + n)`, "webweb", []string{"schema"}},
		{`schema.spec.tags.all(i, t, size(t) > i)`, true, []string{"schema"}},
		{`schema.spec.labels.transformMap(k, v, v + "!")`, map[string]any{"k": "v!"}, []string{"schema"}},
		{`schema.spec.?missing.orValue("d")`, "d", []string{"schema"}},
		{`config.?data.x.orValue("none")`, "1", []string{"config"}},
		{`base64.encode(b"hi")`, "aGk=", nil},
		{`math.greatest(1, 5, 3)`, int64(5), nil},
		{`sets.contains([1, 2], [1])`, true, nil},
		{`quantity("1Gi").isGreaterThan(quantity("1Mi"))`, true, nil},
		{`url("https://x.io/p").getHost()`, "x.io", nil},
		{`"abc123".find("[0-9]+")`, "123", nil},
		{`[1, 2, 3].slice(0, 2)`, []any{int64(1), int64(2)}, nil},
		{`[1, 2].sum()`, int64(3), nil},
		{`"a.b.c".split(".").join("-")`, "a-b-c", nil},
		{`random.seededString(10, "test-seed")`, "5czheg3o5c", nil},
		{`random.seededInt(30000, 32768, "my-service")`, int64(31247), nil},
		{`base64.encode(hash.sha256("hello world"))`, "uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek=", nil},
		{`json.marshal(schema.spec.labels)`, `{"k":"v"}`, []string{"schema"}},
		{`json.encode({"a": 1})`, `{"a":1}`, nil},
		{`json.unmarshal('{"n": 2}').n`, 2.0, nil},
		{`schema.spec.labels.merge({"k": "w", "z": "1"})`, map[string]any{"k": "w", "z": "1"}, []string{"schema"}},
		{`{"a": {"x": 1}}.deepMerge({"a": {"y": 2}})`, map[string]any{"a": map[string]any{"x": int64(1), "y": int64(2)}}, nil},
		{`lists.insertAtIndex(schema.spec.tags, 1, "z")`, []any{"a", "z", "bb"}, []string{"schema"}},
		{`ip("10.0.0.1").family()`, int64(4), nil},
		{`cidr("10.0.0.0/8").containsIP("10.1.2.3")`, true, nil},
		{`string(cidr("192.168.0.1/24").masked())`, "192.168.0.0/24", nil},
		{`semver("1.2.3").isLessThan(semver("1.10.0"))`, true, nil},
		{`isSemver("v1.0")`, false, nil},
		{`duration("90m")`, "1h30m0s", nil},
		{`string(duration("90m"))`, "5400s", nil},
		{`timestamp("2024-01-02T03:04:05.123Z")`, "2024-01-02T03:04:05Z", nil},
		{`schema.spec.tags.map(t, t + config.data.x)`, []any{"a1", "bb1"}, []string{"config", "schema"}},
		{`{"a": [1, 2.5, null, true]}`, map[string]any{"a": []any{int64(1), 2.5, nil, true}}, nil},
		// Type names are constants, not data: no reference to wait for.
		{`type(schema.spec.name) == string && type(1) != list`, true, []string{"schema"}},
	}
	for _, tt := range tests {
		c, err := compile(env, tt.expr)
		if err != nil {
			t.Errorf("%s: %v", tt.expr, err)
			continue
		}
		if !reflect.DeepEqual(c.expr.References, tt.refs) && !(len(tt.refs) == 0 && len(c.expr.References) == 0) {
			t.Errorf("%s: references %v, want %v", tt.expr, c.expr.References, tt.refs)
		}
		got, err := c.expr.Eval(vars)
		if err != nil {
			t.Errorf("%s: %v", tt.expr, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s = %#v, want %#v", tt.expr, got, tt.want)
		}
	}
}

func TestEvalResultKinds(t *testing.T) {
	env, err := graphEnv(nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for expr, wantErr := range map[string]string{
		`b"raw"`:                            "encode it explicitly",
		`{1: "a"}`:                          "map key must be string, got int64",
		`ip("10.0.0.1")`:                    "unsupported type: net.IP",
		`type(1)`:                           "unsupported type: type",
		`[1][3]`:                            "data pending",
		`{"a": 1}["b"]`:                     "data pending",
		`1 / 0`:                             "division by zero",
		`duration("1s") + 1`:                "no matching overload",
		`int("x")`:                          "type conversion error",
		`18446744073709551615u`:             "overflows int64",
		`timestamp("2020-01-01T00:00:00Z")`: "",
	} {
		c, err := compile(env, expr)
		if err != nil {
			// Type errors are caught before evaluation.
			if wantErr == "" || !strings.Contains(err.Error(), wantErr) {
				t.Errorf("%s: compile: %v", expr, err)
			}
			continue
		}
		_, err = c.expr.Eval(Vars{})
		switch {
		case wantErr == "" && err != nil:
			t.Errorf("%s: %v", expr, err)
		case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
			t.Errorf("%s: err = %v, want %q", expr, err, wantErr)
		}
		if wantErr == "data pending" && !IsDataPending(err) {
			t.Errorf("%s: %v is not data pending", expr, err)
		}
	}
}

// TestSchemaTypeFromSimpleSchema checks the declared type of schema.
func TestSchemaTypeFromSimpleSchema(t *testing.T) {
	spec, errs := specSchema(map[string]any{
		"name":  "string",
		"count": "integer",
		"ratio": "float",
		"tags":  "[]string",
		"env":   "map[string]string",
		"free":  "object",
		"db":    map[string]any{"port": "integer"},
	}, nil)
	if errs != nil {
		t.Fatal(errs)
	}
	dt := declType(spec, "@t")
	want := map[string]*apiservercel.DeclType{
		"name": apiservercel.StringType, "count": apiservercel.IntType, "ratio": apiservercel.DoubleType,
	}
	for k, w := range want {
		if got := dt.Fields[k].Type; got.CelType().String() != w.CelType().String() {
			t.Errorf("%s: %s, want %s", k, got.CelType(), w.CelType())
		}
	}
	if got := dt.Fields["tags"].Type.CelType().String(); got != "list(string)" {
		t.Errorf("tags: %s", got)
	}
	if got := dt.Fields["env"].Type.CelType().String(); got != "map(string, string)" {
		t.Errorf("env: %s", got)
	}
	if got := dt.Fields["free"].Type.CelType().String(); got != "map(string, dyn)" {
		t.Errorf("free: %s", got)
	}
	if !dt.Fields["db"].Type.IsObject() {
		t.Errorf("db is not an object")
	}
}

// TestCompileRefusesBadPattern: a constant pattern that does not compile
// is a build error, as in kro (which plans when it builds), not an error
// at the first evaluation.
func TestCompileRefusesBadPattern(t *testing.T) {
	env, err := graphEnv(nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{`"abc".find("(")`, `"abc".findAll("[", 2)`} {
		if _, err := compile(env, src); err == nil || !strings.Contains(err.Error(), "error parsing regexp") {
			t.Errorf("%s: compile error %v, want the pattern's", src, err)
		}
	}
	if _, err := compile(env, `"abc".find("b+")`); err != nil {
		t.Errorf("a good pattern: %v", err)
	}
}
