package graph

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// invalidError loads and builds one file of testdata/invalid and returns
// every error text produced.
func invalidError(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	rgds, err := Parse(data, filepath.Base(file))
	if err != nil {
		msgs = append(msgs, err.Error())
	}
	for _, rgd := range rgds {
		if _, err := NewBuilder().Build(rgd); err != nil {
			msgs = append(msgs, err.Error())
		}
	}
	return strings.Join(msgs, "\n")
}

// TestInvalidDefinitions checks that every definition in testdata/invalid
// is rejected with the error text it must produce, and none panics.
func TestInvalidDefinitions(t *testing.T) {
	cases := map[string][]string{
		"bad-default":               {"spec.schema.spec.replicas", `"abc" is not an integer`},
		"apiversion-v1":             {"apiversion-v1 (apiversion-v1.yaml): apiVersion", `unknown apiVersion "kro.run/v1"`, "write apiVersion: kro.run/v1alpha1"},
		"apiversion-trailing-space": {`unknown apiVersion "kro.run/v1alpha1 "`, "remove the spaces"},
		"duplicate-key":             {"duplicate-key.yaml", `key "data" already set in map`},
		"id-too-long":               {"spec.resources[0].id", "id is 71 characters long", "kro.run/node-id label", "at most 63"},
		"id-cel-type-name":          {"spec.resources[0].id", `id "int" is the name of a CEL type`},
		"self-instance":             {"resource again: spec.resources[0].template.kind", "Selfish.kro.run is this graph's own instance kind"},
		"bad-marker":                {"spec.schema.spec.name", `unknown marker "bogus"`},
		"cel-syntax":                {"spec.resources[0].template.metadata.name", "${schema.spec.name +}", "Syntax error"},
		"cel-syntax-unclosed-paren": {"Syntax error: missing ')'"},
		"cluster-instance-child-no-namespace": {"resource config: spec.resources[1].template.metadata.namespace: ConfigMap is namespaced and must set metadata.namespace when the instance kind is cluster-scoped",
			"resource secret: spec.resources[2].template.metadata.namespace: Secret is namespaced"},
		"cycle-beside-bad-id":              {`id "Bad" is not lowerCamelCase`, "dependency cycle: a -> b -> a"},
		"cycle-includewhen":                {"dependency cycle: a -> b -> a"},
		"cycle-three":                      {"dependency cycle: a -> c -> b -> a"},
		"cycle-two":                        {"cycle-two: resource a: spec.resources: dependency cycle: a -> b -> a"},
		"cyclic-custom-types":              {"spec.schema.types.A", "cyclic dependency", "A -> B -> A"},
		"duplicate-id":                     {"spec.resources[1].id", `duplicate resource id "a"`},
		"empty-expression":                 {"at position 2: empty expression ${}"},
		"expression-in-map-key":            {`template.data["${schema.spec.name}"]`, "expressions are not allowed in map keys"},
		"externalref-missing-name":         {"spec.resources[0].externalRef.metadata.name", "metadata.name is missing"},
		"foreach-constant-too-large":       {"resource cms: spec.resources[0].forEach", "the constant dimensions give 1000 x 1000 x 1000 items: a collection has at most 1000 items"},
		"foreach-each-in-template":         {"spec.resources[0].template.data.x", "${each.metadata.name} reads each"},
		"foreach-externalref":              {"spec.resources[0].forEach", "forEach cannot be combined with externalRef"},
		"foreach-includewhen-iterator":     {"spec.resources[0].includeWhen[0]", "reads name", "whole collection"},
		"foreach-iterator-collides":        {"spec.resources[1].forEach[0].other", `iterator "other" has the name of a resource id`},
		"foreach-iterator-not-camel":       {`iterator "my-name" is not lowerCamelCase`, "e.g. myName"},
		"foreach-iterator-outside":         {"resource other", `unknown identifier "name"`},
		"foreach-iterator-reserved":        {`iterator "each" is a reserved word`},
		"foreach-not-a-list":               {"spec.resources[0].forEach[0].name", "${schema.spec.name} returns string, not a list"},
		"foreach-not-standalone":           {"spec.resources[0].forEach[0].name", "is not a standalone expression"},
		"foreach-reads-iterator":           {"spec.resources[0].forEach[1].zone", "${[name]} reads name"},
		"foreach-readywhen-self":           {"spec.resources[0].readyWhen[0]", "reads cms", "may read only each"},
		"foreach-self-dimension":           {"forEach[0].name", "refers to the resource itself"},
		"foreach-too-many-dimensions":      {"spec.resources[0].forEach", "forEach has 11 dimensions, at most 10"},
		"foreach-two-keys":                 {"spec.resources[0].forEach[0]", "exactly one iterator, got 2"},
		"foreach-unused-iterator":          {"resource cms: spec.resources[0].template.metadata.name", "all forEach dimensions must be used to produce a unique resource identity", `iterator "zone"`},
		"id-empty":                         {"spec.resources[0].id: id is empty"},
		"id-upper-camel":                   {`id "MyConfig" is not lowerCamelCase`, "e.g. myConfig"},
		"id-with-dash":                     {`id "my-config" is not lowerCamelCase`, "e.g. myConfig"},
		"includewhen-not-boolean":          {"includeWhen[0]", "${schema.spec.replicas} returns int, not bool"},
		"includewhen-trailing-newline":     {"includeWhen[0]", "is not a standalone expression", "use |-"},
		"instance-apiversion-with-group":   {"spec.schema.apiVersion", `"apps/v1" is not a valid version`},
		"instance-kind-lowercase":          {"spec.schema.kind", `"webApp" is not UpperCamelCase`},
		"instance-kind-missing":            {"spec.schema.kind: kind is empty"},
		"kro-annotation":                   {`metadata.annotations["internal.kro.run/apply-order"]`, "reserved prefix internal.kro.run/"},
		"kro-label":                        {`metadata.labels["kro.run/owned"]`, "reserved prefix kro.run/"},
		"many-errors":                      {`id "Bad-Id" is not lowerCamelCase`, `unknown identifier "nothere"`, `kind "lower" is invalid`},
		"missing-apiversion":               {"spec.resources[0].template.apiVersion: apiVersion is missing"},
		"missing-kind":                     {"spec.resources[0].template.kind: kind is missing"},
		"missing-metadata":                 {"spec.resources[0].template.metadata: metadata is missing"},
		"missing-metadata-name":            {"spec.resources[0].template.metadata.name: metadata.name is missing"},
		"neither-template-nor-externalref": {"neither template nor externalRef is set"},
		"namespace-on-cluster-scoped":      {"spec.resources[0].template.metadata.namespace", "cluster-scoped kind", "ClusterRole is cluster-scoped"},
		"nested-expression":                {"at position 14: nested expressions are not allowed unless inside string literals"},
		"no-name":                          {"metadata.name is empty"},
		"readywhen-not-boolean":            {"readyWhen[0]", "${size(a.data)} returns int, not bool"},
		"readywhen-not-standalone":         {"readyWhen[0]", "is not a standalone expression"},
		"readywhen-other-resource":         {"resource b: spec.resources[1].readyWhen[0]", "reads a", "readyWhen may read only b"},
		"readywhen-unknown-id":             {`unknown identifier "nothere"`},
		"reserved-id-cel-keyword":          {`id "in" is a reserved word`},
		"reserved-id-namespace":            {`id "namespace" is a reserved word`},
		"reserved-id-schema":               {`id "schema" is a reserved word`},
		"reserved-id-spec":                 {`id "spec" is a reserved word`},
		"resources-not-a-list":             {"spec.resources: must be a list, got object"},
		"schema-status-not-readable":       {"${schema.status.foo}", "undefined field 'status'"},
		"self-reference":                   {"${a.metadata.uid} refers to the resource itself"},
		"self-reference-includewhen":       {"includeWhen[0]", "refers to the resource itself"},
		"status-no-expression":             {"spec.schema.status.x", "holds no expression"},
		"status-no-reference":              {`spec.schema.status.lit: instance status field must refer to a resource or schema: "${1 + 1}"`, "spec.schema.status.text", "read a resource or schema"},
		"status-reserved-state":            {"spec.schema.status.state", `"state" is reserved`},
		"status-unknown-id":                {"spec.schema.status.x", `unknown identifier "nothere"`},
		"template-and-externalref":         {"template and externalRef are both set"},
		"template-apiversion-invalid":      {`apiVersion "apps/v1/beta" is invalid`},
		"reference-left-out":               {`apiVersion "apps/v1/x" is invalid`, `resource b: spec.resources[1].template.metadata.name: ${a.metadata.name}: column 1: resource "a" is left out for its own errors`},
		"template-kind-expression":         {"spec.resources[0].template.kind", "expressions are not allowed here"},
		"template-kind-lowercase":          {`kind "configMap" is invalid`},
		"type-error-add":                   {"found no matching overload for '_+_' applied to '(int, string)'"},
		"type-error-compare":               {"template.data.x", "found no matching overload for '_>_' applied to '(string, int)'"},
		"unknown-function":                 {`column 11: unknown function "frobnicate"`},
		"unknown-id":                       {`unknown identifier "missing": only schema and resource ids can be read`},
		"unknown-member-function":          {`unknown function "frobnicate"`},
		"unknown-resource-field":           {`spec.resources[0].tempalte: unknown field "tempalte"`},
		"unknown-schema-field":             {"${schema.spec.nmae}", "undefined field 'nmae'"},
		"spec-undeclared":                  {"spec.resources[0].template.data.k", "${schema.spec.nope}", "undefined field 'nope'"},
		"unknown-schema-key":               {`spec.schema.statuss: unknown field "statuss"`},
		"unknown-type":                     {"spec.schema.spec.name", `unknown type "strng"`},
		"unterminated-expression":          {"at position 2: unterminated expression"},
		"unterminated-string-literal":      {"unterminated string literal in expression"},
		"validation-not-boolean":           {"spec.schema.validation[0].expression: rule returns int, not bool"},
		"validation-unknown-field":         {"spec.schema.validation[0].expression", "undefined field 'replicaz'"},
	}
	files, err := filepath.Glob("testdata/invalid/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 40 {
		t.Fatalf("only %d invalid definitions", len(files))
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			want, ok := cases[name]
			if !ok {
				t.Fatalf("no expected error for %s: add it to the table", file)
			}
			got := invalidError(t, file)
			if got == "" {
				t.Fatalf("%s was accepted", file)
			}
			for _, w := range want {
				if !strings.Contains(got, w) {
					t.Errorf("error does not contain %q:\n%s", w, got)
				}
			}
			// Every error names the definition.
			for _, line := range strings.Split(got, "\n") {
				if !strings.HasPrefix(line, name) {
					t.Errorf("error line does not start with the definition name %q: %s", name, line)
				}
			}
		})
	}
	for name := range cases {
		if _, err := os.Stat(filepath.Join("testdata/invalid", name+".yaml")); err != nil {
			t.Errorf("table names %s, which has no file", name)
		}
	}
}
