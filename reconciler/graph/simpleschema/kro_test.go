package simpleschema

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestKroParity holds, for inputs kroscope once rejected or converted
// differently, the OpenAPI kro v0.9.4's SimpleSchema produces for them
// (pkg/simpleschema: markers.go, transform.go, types/).
func TestKroParity(t *testing.T) {
	tests := []struct {
		name, spec, types string
		want              string // JSON of the root schema
	}{
		{name: "required=True", spec: "a: string | required=True\nb: string | required=TRUE\nc: string | required=t\nd: string | required=1\ne: string | required=False",
			want: `{"type":"object","required":["a","b","c","d"],"properties":{"a":{"type":"string"},"b":{"type":"string"},"c":{"type":"string"},"d":{"type":"string"},"e":{"type":"string"}}}`},
		{name: "immutable=True", spec: "a: string | immutable=True",
			want: `{"type":"object","properties":{"a":{"type":"string","x-kubernetes-validations":[{"rule":"self == oldSelf","message":"field is immutable"}]}}}`},
		{name: "uniqueItems=True", spec: `a: "[]string | uniqueItems=True"`,
			want: `{"type":"object","properties":{"a":{"type":"array","items":{"type":"string"},"x-kubernetes-list-type":"set"}}}`},
		{name: "empty default at the end", spec: `a: "string | default="`,
			want: `{"type":"object","default":{},"properties":{"a":{"type":"string","default":""}}}`},
		{name: "empty default before another marker", spec: `a: "string | default= description=x"`,
			want: `{"type":"object","default":{},"properties":{"a":{"type":"string","default":"","description":"x"}}}`},
		{name: "minimum on a string", spec: `a: string | minimum=1 maximum=5`,
			want: `{"type":"object","properties":{"a":{"type":"string","minimum":1,"maximum":5}}}`},
		{name: "validation message", spec: `a: string | validation="self.size() > 0"`,
			want: `{"type":"object","properties":{"a":{"type":"string","x-kubernetes-validations":[{"rule":"self.size() > 0","message":"validation failed"}]}}}`},
		{name: "immutable and validation both kept, in written order", spec: `a: integer | validation="self > 0" immutable=true`,
			want: `{"type":"object","properties":{"a":{"type":"integer","x-kubernetes-validations":[{"rule":"self > 0","message":"validation failed"},{"rule":"self == oldSelf","message":"field is immutable"}]}}}`},
		{name: "float is number", spec: `a: float | default=1.5`,
			want: `{"type":"object","default":{},"properties":{"a":{"type":"number","default":1.5}}}`},
		{name: "custom types referencing custom types", spec: `a: Outer`, types: "Outer:\n  in: Inner\nInner:\n  x: integer | default=1",
			want: `{"type":"object","default":{},"properties":{"a":{"type":"object","default":{},"properties":{"in":{"type":"object","default":{},"properties":{"x":{"type":"integer","default":1}}}}}}}`},
		{name: "listType and listMapKey", spec: `a: "[]T | listType=map listMapKey=k"`, types: "T:\n  k: string | required=true\n  v: string",
			want: `{"type":"object","properties":{"a":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["k"],"items":{"type":"object","required":["k"],"properties":{"k":{"type":"string"},"v":{"type":"string"}}}}}}`},
		{name: "nesting depth 16", spec: `a: "` + strings.Repeat("[]", 16) + `string"`,
			want: `{"type":"object","properties":{"a":` + strings.Repeat(`{"type":"array","items":`, 16) + `{"type":"string"}` + strings.Repeat("}", 16) + `}}`},
		{name: "a repeated marker takes the last value", spec: `a: string | description=one description=two`,
			want: `{"type":"object","properties":{"a":{"type":"string","description":"two"}}}`},
		{name: "required when any required marker says so", spec: `a: string | required=true required=false`,
			want: `{"type":"object","required":["a"],"properties":{"a":{"type":"string"}}}`},
		{name: "duplicate enum values kept", spec: `a: string | enum="a,b,a"`,
			want: `{"type":"object","properties":{"a":{"type":"string","enum":["a","b","a"]}}}`},
		{name: "alias type required", spec: "a: Name | required=false", types: "Name: string | required=True",
			want: `{"type":"object","required":["a"],"properties":{"a":{"type":"string"}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ToOpenAPI(mustYAML(t, tt.spec), mustYAML(t, tt.types))
			if err != nil {
				t.Fatalf("ToOpenAPI: %v", err)
			}
			if d := cmp.Diff(toJSONValue(t, tt.want), toJSONValue(t, got)); d != "" {
				t.Errorf("schema (-kro +kroscope):\n%s", d)
			}
		})
	}
}

// TestKroParityErrors: what kro rejects, kroscope rejects too.
func TestKroParityErrors(t *testing.T) {
	tests := []struct{ name, spec, types, want string }{
		{name: "nesting depth 17", spec: `a: "` + strings.Repeat("[]", 17) + `string"`, want: "type nests deeper than 16 levels"},
		{name: "cycle", spec: `a: A`, types: "A:\n  b: B\nB:\n  a: A", want: "cyclic dependency in type A"},
		{name: "empty validation", spec: `a: string | validation=""`, want: "empty CEL rule"},
		{name: "empty integer default", spec: `a: "integer | default="`, want: `"" is not an integer`},
		{name: "an undeclared custom type", spec: `a: Number`, want: `unknown type "Number"`},
		{name: "empty marker section", spec: `a: "string |"`, want: "nothing after '|'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ToOpenAPI(mustYAML(t, tt.spec), mustYAML(t, tt.types))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
