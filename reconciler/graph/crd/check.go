package crd

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	apiextensionscel "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// The checks below are the parts of the API server's CRD validation that
// concern what a graph contributes (its schema, rules and columns), run
// with the packages the API server runs them with: structural schema,
// defaults, the schema validator, CEL compilation and cost. They do not
// call apiextensions' ValidateCustomResourceDefinition, whose package
// imports k8s.io/apiserver's webhook code (for conversion webhooks, which
// kroscope's CRDs never have) and with it grpc and OpenTelemetry: about
// half of kroscope's binary. Names, scope and versions kroscope sets itself
// (checkNames); with a cluster the engine's apply and validate's server-side
// dry run get the API server's complete validation.

// The API server's CEL cost limits for CRD validation rules
// (apiextensions/validation's StaticEstimatedCostLimit and
// StaticEstimatedCRDCostLimit, whose package is the one left out).
const (
	ruleCostLimit  = 10_000_000
	totalCostLimit = 100_000_000
)

// checkSchema runs the structural, defaulting, CEL and validator checks on
// a version's schema, with paths as the API server words them.
func checkSchema(s *apiextensions.JSONSchemaProps, path *field.Path) field.ErrorList {
	if s == nil {
		return nil
	}
	ss, err := structuralschema.NewStructural(s)
	if err != nil {
		return field.ErrorList{field.Invalid(path, "", err.Error())}
	}
	if errs := structuralschema.ValidateStructural(path, ss); len(errs) > 0 {
		return errs
	}
	errs, err := structuraldefaulting.ValidateDefaults(context.Background(), path, ss, true, true)
	if err != nil {
		return field.ErrorList{field.Invalid(path, "", err.Error())}
	}
	if len(errs) > 0 {
		return errs
	}
	errs = checkPatterns(s, path)
	if len(errs) > 0 {
		return errs
	}
	c := celChecker{envSet: environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())}
	one := uint64(1)
	c.walk(ss, path, true, &one)
	if c.total > totalCostLimit {
		c.errs = append(c.errs, field.Forbidden(path, fmt.Sprintf("x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of %.1fx (try simplifying the rules, or adding maxItems, maxProperties and maxLength where arrays, maps and strings are declared)", float64(c.total)/totalCostLimit)))
	}
	if len(c.errs) > 0 {
		return c.errs
	}
	if _, _, err := apiservervalidation.NewSchemaValidator(s); err != nil {
		return field.ErrorList{field.Invalid(path, "", fmt.Sprintf("error building validator: %v", err))}
	}
	return nil
}

// openAPIV3Types are the types a CRD schema may declare.
var openAPIV3Types = []string{"array", "boolean", "integer", "number", "object", "string"}

// checkPatterns checks each node's type and compiles its pattern as the
// API server's validator would (Go's regexp): a pattern that does not
// compile fails every instance.
func checkPatterns(s *apiextensions.JSONSchemaProps, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Type != "" && !slices.Contains(openAPIV3Types, s.Type) {
		errs = append(errs, field.NotSupported(path.Child("type"), s.Type, openAPIV3Types))
	}
	if s.Pattern != "" {
		if _, err := regexp.Compile(s.Pattern); err != nil {
			errs = append(errs, field.Invalid(path.Child("pattern"), s.Pattern, "must be a valid regular expression, but isn't: "+err.Error()))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		p := s.Properties[name]
		errs = append(errs, checkPatterns(&p, path.Child("properties").Key(name))...)
	}
	if s.Items != nil && s.Items.Schema != nil {
		errs = append(errs, checkPatterns(s.Items.Schema, path.Child("items"))...)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		errs = append(errs, checkPatterns(s.AdditionalProperties.Schema, path.Child("additionalProperties"))...)
	}
	return errs
}

// celChecker compiles each node's x-kubernetes-validations against the
// node's type, as the API server does on create.
type celChecker struct {
	envSet *environment.EnvSet
	total  uint64
	errs   field.ErrorList
}

// walk compiles the rules of s and below. card is how many times s can
// occur in one object, as the API server bounds it (nil: unbounded, under
// a list or map without maxItems or maxProperties).
func (c *celChecker) walk(s *structuralschema.Structural, path *field.Path, root bool, card *uint64) {
	if len(s.XValidations) > 0 {
		c.compile(s, path, root, card)
	}
	childCard := childCardinality(s, card)
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		p := s.Properties[name]
		c.walk(&p, path.Child("properties").Key(name), false, childCard)
	}
	if s.Items != nil {
		c.walk(s.Items, path.Child("items"), false, childCard)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil {
		c.walk(s.AdditionalProperties.Structural, path.Child("additionalProperties"), false, childCard)
	}
}

// childCardinality multiplies card by how many children s can have: one
// of each field of an object, maxItems of a list, maxProperties of a map.
func childCardinality(s *structuralschema.Structural, card *uint64) *uint64 {
	if card == nil {
		return nil
	}
	var max *int64
	switch {
	case s.Type == "array":
		if s.ValueValidation != nil {
			max = s.ValueValidation.MaxItems
		}
	case s.Type == "object" && s.AdditionalProperties != nil:
		if s.ValueValidation != nil {
			max = s.ValueValidation.MaxProperties
		}
	default:
		return card
	}
	if max == nil {
		return nil
	}
	n := saturatingMul(*card, uint64(maxInt64(*max, 0)))
	return &n
}

func maxInt64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

func (c *celChecker) compile(s *structuralschema.Structural, path *field.Path, root bool, card *uint64) {
	rules := path.Child("x-kubernetes-validations")
	results, err := apiextensionscel.Compile(s, model.SchemaDeclType(s, root), celconfig.PerCallLimit, c.envSet, apiextensionscel.NewExpressionsEnvLoader())
	if err != nil {
		c.errs = append(c.errs, field.InternalError(rules, err))
		return
	}
	for i, r := range results {
		rule := rules.Index(i).Child("rule")
		cost := saturatingMul(r.MaxCost, r.MaxCardinality)
		if card != nil {
			cost = saturatingMul(r.MaxCost, *card)
		}
		c.total = saturatingAdd(c.total, cost)
		if cost > ruleCostLimit {
			c.errs = append(c.errs, field.Forbidden(rule, fmt.Sprintf("estimated rule cost exceeds budget by factor of %.1fx (try simplifying the rule, or adding maxItems, maxProperties and maxLength where arrays, maps and strings are declared)", float64(cost)/ruleCostLimit)))
		}
		if r.Error != nil {
			if r.Error.Type == apiservercel.ErrorTypeRequired {
				c.errs = append(c.errs, field.Required(rule, r.Error.Detail))
			} else {
				c.errs = append(c.errs, field.Invalid(rule, s.XValidations[i].Rule, r.Error.Detail))
			}
		}
		if r.MessageExpressionError != nil {
			c.errs = append(c.errs, field.Invalid(rules.Index(i).Child("messageExpression"), s.XValidations[i].MessageExpression, r.MessageExpressionError.Detail))
		}
	}
}

func saturatingMul(a, b uint64) uint64 {
	if a != 0 && b > ^uint64(0)/a {
		return ^uint64(0)
	}
	return a * b
}

func saturatingAdd(a, b uint64) uint64 {
	if a+b < a {
		return ^uint64(0)
	}
	return a + b
}

// Printer column types and formats the API server accepts.
var (
	columnTypes   = []string{"boolean", "date", "integer", "number", "string"}
	columnFormats = []string{"byte", "date", "date-time", "double", "float", "int32", "int64", "password"}
)

// checkColumns is the API server's printer column check: a name, one of
// its types and formats, and a JSON path in the dot notation.
func checkColumns(cols []apiextensions.CustomResourceColumnDefinition, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, col := range cols {
		p := path.Index(i)
		if col.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		}
		if col.Type == "" {
			errs = append(errs, field.Required(p.Child("type"), "must be one of "+strings.Join(columnTypes, ",")))
		} else if !slices.Contains(columnTypes, col.Type) {
			errs = append(errs, field.Invalid(p.Child("type"), col.Type, "must be one of "+strings.Join(columnTypes, ",")))
		}
		if col.Format != "" && !slices.Contains(columnFormats, col.Format) {
			errs = append(errs, field.Invalid(p.Child("format"), col.Format, "must be one of "+strings.Join(columnFormats, ",")))
		}
		switch {
		case col.JSONPath == "":
			errs = append(errs, field.Required(p.Child("JSONPath"), ""))
		case col.JSONPath[0] != '.':
			errs = append(errs, field.Invalid(p.Child("JSONPath"), col.JSONPath, "must be a simple json path starting with ."))
		}
	}
	return errs
}

// checkCRDNames is the API server's check of the names a CRD is served
// under: the plural, singular, kind, list kind, short names and categories
// must be DNS-1035 labels (kind and list kind in any case).
func checkCRDNames(n apiextensions.CustomResourceDefinitionNames, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	label := func(p *field.Path, value, checked, prefix string) {
		if msgs := validation.IsDNS1035Label(checked); value != "" && len(msgs) > 0 {
			errs = append(errs, field.Invalid(p, value, prefix+strings.Join(msgs, ",")))
		}
	}
	label(path.Child("plural"), n.Plural, n.Plural, "")
	label(path.Child("singular"), n.Singular, n.Singular, "")
	label(path.Child("kind"), n.Kind, strings.ToLower(n.Kind), "may have mixed case, but should otherwise match: ")
	label(path.Child("listKind"), n.ListKind, strings.ToLower(n.ListKind), "may have mixed case, but should otherwise match: ")
	for i, s := range n.ShortNames {
		label(path.Child("shortNames").Index(i), s, s, "")
	}
	for i, c := range n.Categories {
		label(path.Child("categories").Index(i), c, c, "")
	}
	return errs
}
