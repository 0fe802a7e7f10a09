package simpleschema

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

func mustYAML(t *testing.T, s string) map[string]any {
	t.Helper()
	if s == "" {
		return nil
	}
	var m map[string]any
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("bad test YAML: %v", err)
	}
	return m
}

// toJSONValue makes schema and expectation comparable as plain JSON values.
func toJSONValue(t *testing.T, v any) any {
	t.Helper()
	var raw []byte
	switch v := v.(type) {
	case string:
		raw = []byte(v)
	default:
		var err error
		if raw, err = json.Marshal(v); err != nil {
			t.Fatal(err)
		}
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("bad JSON %s: %v", raw, err)
	}
	return out
}

func TestToOpenAPI(t *testing.T) {
	tests := []struct {
		name, spec, types string
		// want is the JSON of spec.properties (or of the whole schema when
		// wantRoot is set).
		want     string
		wantRoot bool
	}{
		{name: "string", spec: `a: string`, want: `{"a":{"type":"string"}}`},
		{name: "integer", spec: `a: integer`, want: `{"a":{"type":"integer"}}`},
		{name: "boolean", spec: `a: boolean`, want: `{"a":{"type":"boolean"}}`},
		{name: "float is number", spec: `a: float`, want: `{"a":{"type":"number"}}`},
		{name: "number", spec: `a: number`, want: `{"a":{"type":"number"}}`},
		{name: "object keeps unknown fields", spec: `a: object`, want: `{"a":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}`},
		{name: "list", spec: `a: "[]string"`, want: `{"a":{"type":"array","items":{"type":"string"}}}`},
		{name: "list of lists", spec: `a: "[][]integer"`, want: `{"a":{"type":"array","items":{"type":"array","items":{"type":"integer"}}}}`},
		{name: "map", spec: `a: "map[string]integer"`, want: `{"a":{"type":"object","additionalProperties":{"type":"integer"}}}`},
		{name: "map of lists", spec: `a: "map[string][]boolean"`, want: `{"a":{"type":"object","additionalProperties":{"type":"array","items":{"type":"boolean"}}}}`},
		{name: "map of maps", spec: `a: "map[string]map[string]string"`, want: `{"a":{"type":"object","additionalProperties":{"type":"object","additionalProperties":{"type":"string"}}}}`},
		{name: "spaces around type and bar", spec: `a: "  integer   |   default=3  "`, want: `{"a":{"type":"integer","default":3}}`},
		{name: "nested object", spec: "a:\n  b: string\n  c:\n    d: integer", want: `{"a":{"type":"object","properties":{"b":{"type":"string"},"c":{"type":"object","properties":{"d":{"type":"integer"}}}}}}`},
		{name: "required sorted", spec: "b: string | required=true\na: string | required=true\nc: string | required=false",
			want: `{"type":"object","required":["a","b"],"properties":{"a":{"type":"string"},"b":{"type":"string"},"c":{"type":"string"}}}`, wantRoot: true},
		{name: "string default bare", spec: `a: string | default=nginx`, want: `{"a":{"type":"string","default":"nginx"}}`},
		{name: "string default quoted empty", spec: `a: string | default=""`, want: `{"a":{"type":"string","default":""}}`},
		{name: "string default quoted with escapes", spec: `a: 'string | default="say \"hi\" \\ ok"'`, want: `{"a":{"type":"string","default":"say \"hi\" \\ ok"}}`},
		{name: "string default that looks like a number", spec: `a: string | default=42`, want: `{"a":{"type":"string","default":"42"}}`},
		{name: "integer default", spec: `a: integer | default=-7`, want: `{"a":{"type":"integer","default":-7}}`},
		{name: "number default", spec: `a: float | default=1.5`, want: `{"a":{"type":"number","default":1.5}}`},
		{name: "boolean default", spec: `a: boolean | default=false`, want: `{"a":{"type":"boolean","default":false}}`},
		{name: "list default json with spaces", spec: `a: '[]string | default=["x", "y z"]'`, want: `{"a":{"type":"array","items":{"type":"string"},"default":["x","y z"]}}`},
		{name: "map default json", spec: `a: 'map[string]integer | default={"x": 1, "y": 2}'`, want: `{"a":{"type":"object","additionalProperties":{"type":"integer"},"default":{"x":1,"y":2}}}`},
		{name: "object default json", spec: `a: 'object | default={"free": ["form"]}'`, want: `{"a":{"type":"object","x-kubernetes-preserve-unknown-fields":true,"default":{"free":["form"]}}}`},
		{name: "description", spec: `a: string | description="The name, in full."`, want: `{"a":{"type":"string","description":"The name, in full."}}`},
		{name: "string enum", spec: `a: string | enum="red, green,blue"`, want: `{"a":{"type":"string","enum":["red","green","blue"]}}`},
		{name: "integer enum", spec: `a: integer | enum="1,2,3" default=2`, want: `{"a":{"type":"integer","enum":[1,2,3],"default":2}}`},
		{name: "minimum maximum", spec: `a: integer | minimum=1 maximum=10 default=1`, want: `{"a":{"type":"integer","minimum":1,"maximum":10,"default":1}}`},
		{name: "fractional minimum on number", spec: `a: number | minimum=0.5`, want: `{"a":{"type":"number","minimum":0.5}}`},
		{name: "pattern keeps backslashes", spec: `a: string | pattern="^[a-z]+\.[a-z]{2,}$"`, want: `{"a":{"type":"string","pattern":"^[a-z]+\\.[a-z]{2,}$"}}`},
		{name: "lengths", spec: `a: string | minLength=3 maxLength=15`, want: `{"a":{"type":"string","minLength":3,"maxLength":15}}`},
		{name: "items", spec: `a: "[]integer | minItems=0 maxItems=3"`, want: `{"a":{"type":"array","items":{"type":"integer"},"minItems":0,"maxItems":3}}`},
		{name: "uniqueItems is a set", spec: `a: "[]string | uniqueItems=true"`, want: `{"a":{"type":"array","items":{"type":"string"},"x-kubernetes-list-type":"set"}}`},
		{name: "uniqueItems false is nothing", spec: `a: "[]string | uniqueItems=false"`, want: `{"a":{"type":"array","items":{"type":"string"}}}`},
		{name: "immutable", spec: `a: string | immutable=true`, want: `{"a":{"type":"string","x-kubernetes-validations":[{"rule":"self == oldSelf","message":"field is immutable"}]}}`},
		{name: "validation and immutable append in written order", spec: `a: integer | validation="self > 2" immutable=true validation="self < 9"`,
			want: `{"a":{"type":"integer","x-kubernetes-validations":[{"rule":"self > 2","message":"validation failed"},{"rule":"self == oldSelf","message":"field is immutable"},{"rule":"self < 9","message":"validation failed"}]}}`},
		{name: "parent defaults to empty object", spec: "svc:\n  enabled: boolean | default=true\n  port: integer",
			want: `{"type":"object","default":{},"properties":{"svc":{"type":"object","default":{},"properties":{"enabled":{"type":"boolean","default":true},"port":{"type":"integer"}}}}}`, wantRoot: true},
		{name: "default propagates through levels", spec: "a:\n  b:\n    c: integer | default=1",
			want: `{"a":{"type":"object","default":{},"properties":{"b":{"type":"object","default":{},"properties":{"c":{"type":"integer","default":1}}}}}}`},
		{name: "no parent default with a required child", spec: "svc:\n  enabled: boolean | default=true\n  name: string | required=true",
			want: `{"svc":{"type":"object","required":["name"],"properties":{"enabled":{"type":"boolean","default":true},"name":{"type":"string"}}}}`},
		{name: "no parent default without defaulted children", spec: "svc:\n  name: string",
			want: `{"svc":{"type":"object","properties":{"name":{"type":"string"}}}}`},
		{name: "custom struct type", spec: `p: Port`, types: "Port:\n  number: integer | minimum=1\n  name: string",
			want: `{"p":{"type":"object","properties":{"name":{"type":"string"},"number":{"type":"integer","minimum":1}}}}`},
		{name: "custom types use each other", spec: `svc: "[]Service"`, types: "Service:\n  ports: \"[]Port\"\nPort:\n  number: integer | default=80",
			want: `{"svc":{"type":"array","items":{"type":"object","properties":{"ports":{"type":"array","items":{"type":"object","default":{},"properties":{"number":{"type":"integer","default":80}}}}}}}}`},
		{name: "custom type in a map", spec: `m: "map[string]Port"`, types: "Port:\n  num: integer",
			want: `{"m":{"type":"object","additionalProperties":{"type":"object","properties":{"num":{"type":"integer"}}}}}`},
		{name: "alias type with markers and required", spec: "a: Name\nb: Name | description=\"B\"", types: `Name: string | required=true minLength=2`,
			want: `{"type":"object","required":["a","b"],"properties":{"a":{"type":"string","minLength":2},"b":{"type":"string","minLength":2,"description":"B"}}}`, wantRoot: true},
		{name: "required=false does not undo the alias", spec: "a: Name | required=false\nb: Name", types: `Name: string | required=true`,
			want: `{"type":"object","required":["a","b"],"properties":{"a":{"type":"string"},"b":{"type":"string"}}}`, wantRoot: true},
		{name: "marker on a custom struct use", spec: `p: Port | required=true description="the port"`, types: "Port:\n  num: integer",
			want: `{"type":"object","required":["p"],"properties":{"p":{"type":"object","description":"the port","properties":{"num":{"type":"integer"}}}}}`, wantRoot: true},
		{name: "free-form and map defaults keep any field", spec: "o: 'object | default={\"x\": {\"y\": 1}}'\nm: 'map[string]T | default={\"k\": {\"a\": 1}}'", types: "T:\n  a: integer",
			want: `{"o":{"type":"object","x-kubernetes-preserve-unknown-fields":true,"default":{"x":{"y":1}}},"m":{"type":"object","additionalProperties":{"type":"object","properties":{"a":{"type":"integer"}}},"default":{"k":{"a":1}}}}`},
		{name: "json default on a custom struct", spec: `p: 'Port | default={"num": 3}'`, types: "Port:\n  num: integer | maximum=5",
			want: `{"p":{"type":"object","default":{"num":3},"properties":{"num":{"type":"integer","maximum":5}}}}`},
		{name: "listType atomic", spec: `a: "[]string | listType=atomic"`, want: `{"a":{"type":"array","items":{"type":"string"},"x-kubernetes-list-type":"atomic"}}`},
		{name: "listType set with uniqueItems", spec: `a: "[]integer | uniqueItems=true listType=set"`, want: `{"a":{"type":"array","items":{"type":"integer"},"x-kubernetes-list-type":"set"}}`},
		{name: "listType map makes keys required", spec: `a: "[]Port | listType=map listMapKey=name listMapKey=proto"`, types: "Port:\n  name: string\n  proto: string | default=TCP\n  num: integer",
			want: `{"a":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name","proto"],"items":{"type":"object","required":["name"],"properties":{"name":{"type":"string"},"proto":{"type":"string","default":"TCP"},"num":{"type":"integer"}}}}}`},
		{name: "empty spec", spec: ``, want: `{"type":"object"}`, wantRoot: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ToOpenAPI(mustYAML(t, tt.spec), mustYAML(t, tt.types))
			if err != nil {
				t.Fatalf("ToOpenAPI: %v", err)
			}
			var gotV any = got
			if !tt.wantRoot {
				gotV = got.Properties
			}
			if d := cmp.Diff(toJSONValue(t, tt.want), toJSONValue(t, gotV)); d != "" {
				t.Errorf("schema (-want +got):\n%s", d)
			}
		})
	}
}

func TestToOpenAPIErrors(t *testing.T) {
	tests := []struct {
		name, spec, types string
		// want are substrings that must all appear, each in one line of
		// the joined error.
		want []string
	}{
		{name: "unknown type", spec: `a: strin`, want: []string{`spec.a: unknown type "strin"`}},
		{name: "unknown type in list", spec: `a: "[]Foo"`, want: []string{`spec.a: unknown type "Foo"`}},
		{name: "unknown type in nested object", spec: "a:\n  b: intger", want: []string{`spec.a.b: unknown type "intger"`}},
		{name: "unknown marker", spec: `a: string | requird=true`, want: []string{`spec.a: unknown marker "requird"`}},
		{name: "marker without value", spec: `a: string | required`, want: []string{`spec.a: marker "required" has no value`}},
		{name: "empty marker section", spec: `a: "string |"`, want: []string{`spec.a: nothing after '|'`}},
		{name: "empty integer default", spec: `a: "integer | default= required=true"`, want: []string{`spec.a: default=: "" is not an integer`}},
		{name: "unterminated quote", spec: `a: 'string | description="oops'`, want: []string{`spec.a: marker "description": unterminated quoted value`}},
		{name: "unbalanced json default", spec: `a: '[]string | default=["a"'`, want: []string{`spec.a: marker "default": unbalanced brackets`}},
		{name: "text glued after quoted value", spec: `a: 'string | description="x"y'`, want: []string{`spec.a: marker "description": unexpected "y"`}},
		{name: "integer default not an integer", spec: `a: integer | default=abc`, want: []string{`spec.a: default=abc: "abc" is not an integer`}},
		{name: "integer default is a float", spec: `a: integer | default=1.5`, want: []string{`spec.a: default=1.5: "1.5" is not an integer`}},
		{name: "boolean default", spec: `a: boolean | default=yes`, want: []string{`spec.a: default=yes: "yes" is not true or false`}},
		{name: "number default", spec: `a: float | default=fast`, want: []string{`spec.a: default=fast: "fast" is not a number`}},
		{name: "default not in enum", spec: `a: string | enum="a,b" default=c`, want: []string{`spec.a: default=c: Unsupported value: supported values: "a", "b"`}},
		{name: "default below minimum", spec: `a: integer | minimum=1 default=0`, want: []string{`spec.a: default=0: Invalid value: should be greater than or equal to 1`}},
		{name: "default fails pattern", spec: `a: string | pattern="^[a-z]+$" default=ABC`, want: []string{`spec.a: default=ABC: Invalid value: should match '^[a-z]+$'`}},
		{name: "default too short", spec: `a: string | minLength=3 default=ab`, want: []string{`spec.a: default=ab: Invalid value: should be at least 3 chars long`}},
		{name: "list default not json", spec: `a: '[]string | default=[a]'`, want: []string{`spec.a: default=[a]: not valid JSON for a array`}},
		{name: "list default wrong item type", spec: `a: '[]integer | default=["x"]'`, want: []string{`spec.a: default=["x"]: at [0]: Invalid value: must be of type integer`}},
		{name: "list default too long", spec: `a: '[]integer | maxItems=1 default=[1,2]'`, want: []string{`spec.a: default=[1,2]: Too many`}},
		{name: "struct default with an unknown field", spec: `p: 'T | default={"a": 1, "zz": 2}'`, types: "T:\n  a: integer", want: []string{`spec.p: default={"a": 1, "zz": 2}: unknown field "zz"`}},
		{name: "nested unknown field in a list default", spec: `p: '[]T | default=[{"a": {"b": 1, "c": 2}}]'`, types: "T:\n  a:\n    b: integer", want: []string{`spec.p: default=[{"a": {"b": 1, "c": 2}}]: unknown field "[0].a.c"`}},
		{name: "map default is a list", spec: `a: 'map[string]string | default=["x"]'`, want: []string{`spec.a: default=["x"]: an object default must be a JSON object`}},
		{name: "enum on boolean", spec: `a: boolean | enum="true,false"`, want: []string{`spec.a: enum=true,false: enum applies only to string or integer fields, not boolean`}},
		{name: "enum empty item", spec: `a: string | enum="a,,b"`, want: []string{`spec.a: enum=a,,b: empty value in the list`}},
		{name: "integer enum bad item", spec: `a: integer | enum="1,two"`, want: []string{`spec.a: enum=1,two: "two" is not an integer`}},
		{name: "minimum not a number", spec: `a: integer | minimum=one`, want: []string{`spec.a: minimum=one: "one" is not a number`}},
		{name: "minimum above maximum", spec: `a: integer | minimum=5 maximum=1`, want: []string{`spec.a: minimum 5 is greater than maximum 1`}},
		{name: "pattern on integer", spec: `a: integer | pattern="^1$"`, want: []string{`spec.a: pattern=^1$: pattern applies only to string fields, not integer`}},
		{name: "pattern does not compile", spec: `a: string | pattern="(["`, want: []string{`spec.a: pattern=([: not a valid regular expression`}},
		{name: "negative minLength", spec: `a: string | minLength=-1`, want: []string{`spec.a: minLength=-1: "-1" is not a non-negative integer`}},
		{name: "minLength above maxLength", spec: `a: string | minLength=5 maxLength=2`, want: []string{`spec.a: minLength 5 is greater than maxLength 2`}},
		{name: "minItems on string", spec: `a: string | minItems=1`, want: []string{`spec.a: minItems=1: minItems applies only to array ([]T) fields, not string`}},
		{name: "maxItems on map", spec: `a: map[string]string | maxItems=1`, want: []string{`spec.a: maxItems=1: maxItems applies only to array ([]T) fields, not map`}},
		{name: "uniqueItems on objects", spec: `a: "[]object | uniqueItems=true"`, want: []string{`spec.a: uniqueItems=true: only lists of scalars can be unique, not lists of object`}},
		{name: "uniqueItems not boolean", spec: `a: "[]string | uniqueItems=yes"`, want: []string{`spec.a: uniqueItems=yes: "yes" is not true or false`}},
		{name: "required not boolean", spec: `a: string | required=yes`, want: []string{`spec.a: required=yes: "yes" is not true or false`}},
		{name: "immutable not boolean", spec: `a: string | immutable=always`, want: []string{`spec.a: immutable=always: "always" is not true or false`}},
		{name: "listType unknown", spec: `a: "[]string | listType=bag"`, want: []string{`spec.a: listType=bag: "bag" is not atomic, set or map`}},
		{name: "listType map of scalars", spec: `a: "[]string | listType=map"`, want: []string{`spec.a: listType=map: only lists of objects with fields can be maps`}},
		{name: "listType map without key", spec: `a: "[]T | listType=map"`, types: "T:\n  k: string", want: []string{`spec.a: listType=map needs at least one listMapKey=FIELD`}},
		{name: "listMapKey without listType map", spec: `a: "[]T | listMapKey=k"`, types: "T:\n  k: string", want: []string{`spec.a: listMapKey=k: needs listType=map`}},
		{name: "listMapKey unknown field", spec: `a: "[]T | listType=map listMapKey=x"`, types: "T:\n  k: string", want: []string{`spec.a: listMapKey=x: the list items have no field "x"`}},
		{name: "listMapKey not scalar", spec: `a: "[]T | listType=map listMapKey=k"`, types: "T:\n  k: \"[]string\"", want: []string{`spec.a: listMapKey=k: key field "k" must be a scalar, not array`}},
		{name: "listType contradicts uniqueItems", spec: `a: "[]string | uniqueItems=true listType=atomic"`, want: []string{`spec.a: listType=atomic: conflicts with uniqueItems=true`}},
		{name: "duplicate listMapKey", spec: `a: "[]T | listType=map listMapKey=k listMapKey=k"`, types: "T:\n  k: string", want: []string{`spec.a: listMapKey=k: key field "k" is listed twice`}},
		{name: "map with non-string key", spec: `a: "map[int]string"`, want: []string{`spec.a: type "map[int]string": map keys must be string, not "int"`}},
		{name: "map without value type", spec: `a: "map[string]"`, want: []string{`spec.a: type "map[string]": missing the map value type`}},
		{name: "map missing bracket", spec: `a: "map[string"`, want: []string{`spec.a: type "map[string": missing ']'`}},
		{name: "too deep", spec: `a: "` + strings.Repeat("[]", MaxTypeDepth+1) + `string"`, want: []string{`spec.a: type nests deeper than 16 levels`}},
		{name: "field is a number", spec: `a: 3`, want: []string{`spec.a: must be a type string such as "string | required=true" or a map of fields, not float64 3`}},
		{name: "field is empty", spec: `a:`, want: []string{`spec.a: empty definition`}},
		{name: "missing type", spec: `a: "| required=true"`, want: []string{`spec.a: missing type`}},
		{name: "type cycle", spec: `a: A`, types: "A:\n  b: B\nB:\n  c: \"[]A\"", want: []string{`types.A: cyclic dependency in type A: A -> B -> A`}},
		{name: "self cycle", spec: `a: string`, types: "A:\n  self: A", want: []string{`types.A: cyclic dependency in type A: A -> A`}},
		{name: "error inside a custom type", spec: `a: T`, types: "T:\n  x: integer | default=no", want: []string{`types.T.x: default=no: "no" is not an integer`}},
		{name: "builtin redeclared", spec: `a: string`, types: `string: integer`, want: []string{`types.string: "string" is a built-in type`}},
		{name: "bad type name", spec: `a: string`, types: `"my-type": integer`, want: []string{`types.my-type: invalid type name "my-type"`}},
		{name: "several errors reported together", spec: "a: strin\nb: integer | default=x\nc:\n  d: boolean | foo=bar",
			want: []string{`spec.a: unknown type "strin"`, `spec.b: default=x: "x" is not an integer`, `spec.c.d: unknown marker "foo"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ToOpenAPI(mustYAML(t, tt.spec), mustYAML(t, tt.types))
			if err == nil {
				t.Fatalf("want an error, got schema %+v", got)
			}
			if got != nil {
				t.Errorf("want a nil schema with the error")
			}
			msg := err.Error()
			lines := strings.Split(msg, "\n")
			if len(lines) != len(tt.want) {
				t.Errorf("want %d error(s), got %d:\n%s", len(tt.want), len(lines), msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error\n  %s\ndoes not contain\n  %s", msg, w)
				}
			}
			// Every error is a *FieldError naming a path.
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Path == "" {
				t.Errorf("error %v is not a *FieldError with a path", err)
			}
		})
	}
}

// TestCheckValidationMarkersSchema compares the spec schema of kro's
// check-validation-markers example with the CRD kro asserts.
func TestCheckValidationMarkersSchema(t *testing.T) {
	spec := mustYAML(t, `
email: string | pattern="^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}$" description="Valid email address"
username: string | minLength=3 maxLength=15 pattern="^[a-zA-Z0-9_]+$" description="Username must be 3-15 chars, alphanumeric and underscore only"
tags: "[]string | uniqueItems=true minItems=1 maxItems=3 description=\"1-3 unique tags\""
priorities: "[]integer | minItems=0 maxItems=3 description=\"Up to 3 priority levels\""
description: string | default="Test application" maxLength=100
replicas: integer | default=1 minimum=1 maximum=10
`)
	// From kro's instancecrd-assert.yaml, plus the spec's own default {}.
	want := mustYAML(t, `
default: {}
properties:
  description:
    default: Test application
    maxLength: 100
    type: string
  email:
    description: Valid email address
    pattern: "^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\\.[a-zA-Z]{2,}$"
    type: string
  replicas:
    maximum: 10
    minimum: 1
    default: 1
    type: integer
  tags:
    description: 1-3 unique tags
    items:
      type: string
    maxItems: 3
    minItems: 1
    type: array
    x-kubernetes-list-type: set
  priorities:
    description: Up to 3 priority levels
    items:
      type: integer
    maxItems: 3
    minItems: 0
    type: array
  username:
    description: Username must be 3-15 chars, alphanumeric and underscore only
    maxLength: 15
    minLength: 3
    pattern: "^[a-zA-Z0-9_]+$"
    type: string
type: object
`)
	got, err := ToOpenAPI(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(toJSONValue(t, want), toJSONValue(t, got)); d != "" {
		t.Errorf("schema (-kro +kroscope):\n%s", d)
	}
}
