package simpleschema

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Marker names.
const (
	MarkerRequired    = "required"
	MarkerDefault     = "default"
	MarkerDescription = "description"
	MarkerEnum        = "enum"
	MarkerMinimum     = "minimum"
	MarkerMaximum     = "maximum"
	MarkerPattern     = "pattern"
	MarkerMinLength   = "minLength"
	MarkerMaxLength   = "maxLength"
	MarkerMinItems    = "minItems"
	MarkerMaxItems    = "maxItems"
	MarkerUniqueItems = "uniqueItems"
	MarkerImmutable   = "immutable"
	MarkerValidation  = "validation"
	// MarkerListType and MarkerListMapKey are kro's newer list markers:
	// x-kubernetes-list-type (atomic, set or map) and, for map lists, the
	// item fields that identify an item (repeatable).
	MarkerListType   = "listType"
	MarkerListMapKey = "listMapKey"
)

// markerOrder is the order markers are applied in: default last, so it is
// checked against every other constraint of the field.
var markerOrder = []string{
	MarkerRequired, MarkerDescription, MarkerEnum, MarkerMinimum, MarkerMaximum,
	MarkerPattern, MarkerMinLength, MarkerMaxLength, MarkerMinItems, MarkerMaxItems,
	MarkerUniqueItems, MarkerListType, MarkerListMapKey, MarkerImmutable, MarkerValidation, MarkerDefault,
}

// ValidationMessage is the message of a `validation=` rule, kro's wording.
const ValidationMessage = "validation failed"

// ImmutableRule is the CEL rule and message of `immutable=true`.
const (
	ImmutableRule    = "self == oldSelf"
	ImmutableMessage = "field is immutable"
)

// applyMarkers sets the markers' constraints on s. It returns the required
// marker's value (nil when absent), and false after reporting an error.
func (b *builder) applyMarkers(path string, s *apiextensionsv1.JSONSchemaProps, markers []Marker) (required *bool, ok bool) {
	// A marker may be given more than once, as in kro: validation,
	// immutable and listMapKey add to the earlier ones, required holds when
	// any says true, and the others take the last value.
	byKey := map[string][]Marker{}
	before := len(b.errs)
	for _, m := range markers {
		if !isKnownMarker(m.Key) {
			b.fail(path, "unknown marker %q: known markers are %s", m.Key, strings.Join(markerOrder, ", "))
			continue
		}
		byKey[m.Key] = append(byKey[m.Key], m)
	}
	// CEL rules keep the order they are written in, as in kro.
	var rules []Marker
	for _, m := range markers {
		if m.Key == MarkerImmutable || m.Key == MarkerValidation {
			rules = append(rules, m)
		}
	}
	byKey[MarkerImmutable], byKey[MarkerValidation] = rules, nil
	for _, key := range markerOrder {
		for _, m := range byKey[key] {
			if err := b.applyMarker(s, m, &required); err != nil {
				b.fail(path, "%s=%s: %v", m.Key, m.Value, err)
			}
		}
	}
	if len(b.errs) == before {
		b.checkRanges(path, s)
	}
	return required, len(b.errs) == before
}

func isKnownMarker(k string) bool {
	for _, m := range markerOrder {
		if m == k {
			return true
		}
	}
	return false
}

// setters are the markers whose constraint reads only the schema and the
// marker's value, each with the set/add function that holds its rules.
var setters = map[string]func(*apiextensionsv1.JSONSchemaProps, string) error{
	MarkerEnum:        setEnum,
	MarkerPattern:     setPattern,
	MarkerUniqueItems: setUniqueItems,
	MarkerListType:    setListType,
	MarkerListMapKey:  addListMapKey,
	MarkerImmutable:   addImmutable,
	MarkerValidation:  addValidation,
}

// applyMarker sets one marker's constraint on s; each marker's own rules
// are in the set/add function it names.
func (b *builder) applyMarker(s *apiextensionsv1.JSONSchemaProps, m Marker, required **bool) error {
	v := m.Value
	if set, ok := setters[m.Key]; ok {
		return set(s, v)
	}
	switch m.Key {
	case MarkerRequired:
		return setRequired(v, required)
	case MarkerDescription:
		s.Description = v
	case MarkerMinimum:
		return setBound(v, &s.Minimum)
	case MarkerMaximum:
		return setBound(v, &s.Maximum)
	case MarkerMinLength:
		return setCount(s, m.Key, "string", v, &s.MinLength)
	case MarkerMaxLength:
		return setCount(s, m.Key, "string", v, &s.MaxLength)
	case MarkerMinItems:
		return setCount(s, m.Key, "array", v, &s.MinItems)
	case MarkerMaxItems:
		return setCount(s, m.Key, "array", v, &s.MaxItems)
	case MarkerDefault:
		return setDefault(s, m)
	}
	return nil
}

// setRequired: required holds when any required marker says true.
func setRequired(v string, required **bool) error {
	r, err := parseBool(v)
	if err != nil {
		return err
	}
	if *required == nil || r {
		*required = &r
	}
	return nil
}

// setBound sets minimum or maximum. kro sets them on any type (the API
// server applies them to numbers only), so graphs written for kro carry
// them on strings.
func setBound(v string, bound **float64) error {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return fmt.Errorf("%q is not a number", v)
	}
	*bound = &f
	return nil
}

func setPattern(s *apiextensionsv1.JSONSchemaProps, v string) error {
	if err := needType(MarkerPattern, s, "string"); err != nil {
		return err
	}
	if _, err := regexp.Compile(v); err != nil {
		return fmt.Errorf("not a valid regular expression: %v", err)
	}
	s.Pattern = v
	return nil
}

// setCount sets a length (of a string) or item count (of an array) bound.
func setCount(s *apiextensionsv1.JSONSchemaProps, marker, schemaType, v string, count **int64) error {
	if err := needType(marker, s, schemaType); err != nil {
		return err
	}
	n, err := parseCount(v)
	if err != nil {
		return err
	}
	*count = &n
	return nil
}

func setUniqueItems(s *apiextensionsv1.JSONSchemaProps, v string) error {
	if err := needType(MarkerUniqueItems, s, "array"); err != nil {
		return err
	}
	u, err := parseBool(v)
	if err != nil || !u {
		return err
	}
	// The API server forbids uniqueItems; a "set" list is its
	// equivalent, and sets may only hold scalars.
	if it := s.Items.Schema; it.Type == "object" || it.Type == "array" {
		return fmt.Errorf("only lists of scalars can be unique, not lists of %s", it.Type)
	}
	s.XListType = ptr("set")
	return nil
}

func setListType(s *apiextensionsv1.JSONSchemaProps, v string) error {
	if err := needType(MarkerListType, s, "array"); err != nil {
		return err
	}
	it := s.Items.Schema
	switch v {
	case "atomic":
	case "set":
		if it.Type == "object" || it.Type == "array" {
			return fmt.Errorf("only lists of scalars can be sets, not lists of %s", it.Type)
		}
	case "map":
		if it.Type != "object" || len(it.Properties) == 0 {
			return fmt.Errorf("only lists of objects with fields can be maps")
		}
	default:
		return fmt.Errorf("%q is not atomic, set or map", v)
	}
	if s.XListType != nil && *s.XListType != v {
		return fmt.Errorf("conflicts with uniqueItems=true, which makes the list a set")
	}
	s.XListType = ptr(v)
	return nil
}

func addListMapKey(s *apiextensionsv1.JSONSchemaProps, v string) error {
	if err := needType(MarkerListMapKey, s, "array"); err != nil {
		return err
	}
	if s.XListType == nil || *s.XListType != "map" {
		return fmt.Errorf("needs listType=map")
	}
	if slices.Contains(s.XListMapKeys, v) {
		return fmt.Errorf("key field %q is listed twice", v)
	}
	it := s.Items.Schema
	p, ok := it.Properties[v]
	if !ok {
		return fmt.Errorf("the list items have no field %q", v)
	}
	switch p.Type {
	case "string", "integer", "number", "boolean":
	default:
		return fmt.Errorf("key field %q must be a scalar, not %s", v, typeName(&p))
	}
	// The API server requires key fields to be required or defaulted.
	if p.Default == nil && !slices.Contains(it.Required, v) {
		it.Required = append(it.Required, v)
		slices.Sort(it.Required)
		// The items' propagated default {} no longer fits.
		if it.Default != nil && string(it.Default.Raw) == "{}" {
			it.Default = nil
		}
	}
	s.XListMapKeys = append(s.XListMapKeys, v)
	return nil
}

func addImmutable(s *apiextensionsv1.JSONSchemaProps, v string) error {
	im, err := parseBool(v)
	if err != nil || !im {
		return err
	}
	s.XValidations = append(s.XValidations, apiextensionsv1.ValidationRule{Rule: ImmutableRule, Message: ImmutableMessage})
	return nil
}

func addValidation(s *apiextensionsv1.JSONSchemaProps, v string) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("empty CEL rule")
	}
	// Appended, never replacing an immutable rule (kro once lost it).
	s.XValidations = append(s.XValidations, apiextensionsv1.ValidationRule{Rule: v, Message: ValidationMessage})
	return nil
}

// needType refuses a marker on a field of another type.
func needType(marker string, s *apiextensionsv1.JSONSchemaProps, schemaType string) error {
	if s.Type == schemaType {
		return nil
	}
	if schemaType == "array" {
		return typeErr(marker, s, "array ([]T)")
	}
	return typeErr(marker, s, schemaType)
}

func typeErr(marker string, s *apiextensionsv1.JSONSchemaProps, want string) error {
	return fmt.Errorf("%s applies only to %s fields, not %s", marker, want, typeName(s))
}

func typeName(s *apiextensionsv1.JSONSchemaProps) string {
	switch {
	case s.Type == "array":
		return "array"
	case s.AdditionalProperties != nil:
		return "map"
	}
	return s.Type
}

// parseBool reads a boolean marker the way kro does (strconv.ParseBool:
// true, True, TRUE, t, 1 and their false forms).
func parseBool(v string) (bool, error) {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%q is not true or false", v)
	}
	return b, nil
}

func parseCount(v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a non-negative integer", v)
	}
	return n, nil
}

func setEnum(s *apiextensionsv1.JSONSchemaProps, v string) error {
	if s.Type != "string" && s.Type != "integer" {
		return typeErr(MarkerEnum, s, "string or integer")
	}
	// A second enum marker replaces the first, as in kro.
	s.Enum = nil
	for item := range strings.SplitSeq(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return fmt.Errorf("empty value in the list (write enum=\"a,b,c\")")
		}
		var raw []byte
		if s.Type == "integer" {
			n, err := strconv.ParseInt(item, 10, 64)
			if err != nil {
				return fmt.Errorf("%q is not an integer", item)
			}
			raw, _ = json.Marshal(n)
		} else {
			raw, _ = json.Marshal(item)
		}
		s.Enum = append(s.Enum, apiextensionsv1.JSON{Raw: raw})
	}
	return nil
}

// setDefault parses the default for the field's type and checks it against
// the field's other constraints, with the API server's own validator.
func setDefault(s *apiextensionsv1.JSONSchemaProps, m Marker) error {
	var val any
	switch s.Type {
	case "string":
		val = m.Value
	case "integer":
		n, err := strconv.ParseInt(m.Value, 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not an integer", m.Value)
		}
		val = n
	case "number":
		f, err := strconv.ParseFloat(m.Value, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("%q is not a number", m.Value)
		}
		val = f
	case "boolean":
		bv, err := parseBool(m.Value)
		if err != nil {
			return err
		}
		val = bv
	default: // array, map, object, custom object types: JSON
		if err := json.Unmarshal([]byte(m.Value), &val); err != nil {
			return fmt.Errorf("not valid JSON for a %s: %v", typeName(s), err)
		}
		if _, isList := val.([]any); s.Type == "array" && !isList {
			return fmt.Errorf("a list default must be a JSON array like [\"a\"]")
		}
		if _, isMap := val.(map[string]any); s.Type == "object" && !isMap {
			return fmt.Errorf("an object default must be a JSON object like {\"a\": 1}")
		}
	}
	if err := validateValue(s, val); err != nil {
		return err
	}
	raw, err := json.Marshal(val)
	if err != nil {
		return err
	}
	s.Default = &apiextensionsv1.JSON{Raw: raw}
	return nil
}

// validateValue checks v against s (without its CEL rules) the way the API
// server validates a custom resource.
func validateValue(s *apiextensionsv1.JSONSchemaProps, v any) error {
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(s, &internal, nil); err != nil {
		return err
	}
	validator, _, err := apiservervalidation.NewSchemaValidator(&internal)
	if err != nil {
		return err
	}
	// JSON numbers decode to float64 or int64 the way the API server
	// decodes them: whole numbers as int64.
	errs := apiservervalidation.ValidateCustomResource(field.NewPath("default"), normalizeNumbers(v), validator)
	if len(errs) == 0 {
		// The API server would prune fields the schema does not have, and
		// so refuses defaults that carry any.
		return unknownField(s, v, "")
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		// The validator words details as "<path> in body should ...";
		// the path is ours to give, so keep only what follows.
		detail := strings.TrimSpace(e.Detail)
		if _, after, ok := strings.Cut(detail, "in body "); ok {
			detail = after
		}
		msgs[i] = e.Type.String() + ": " + detail
		if sub := strings.TrimPrefix(e.Field, "default"); sub != "" {
			msgs[i] = "at " + strings.TrimPrefix(sub, ".") + ": " + msgs[i]
		}
	}
	return fmt.Errorf("%s", strings.Join(msgs, "; "))
}

// unknownField reports the first field of v that s neither declares nor
// lets through (additionalProperties, x-kubernetes-preserve-unknown-fields).
func unknownField(s *apiextensionsv1.JSONSchemaProps, v any, at string) error {
	if s == nil || (s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields) {
		return nil
	}
	switch v := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(v) {
			p := strings.TrimPrefix(at+"."+k, ".")
			var child *apiextensionsv1.JSONSchemaProps
			if prop, ok := s.Properties[k]; ok {
				child = &prop
			} else if s.AdditionalProperties != nil {
				child = s.AdditionalProperties.Schema
			} else {
				return fmt.Errorf("unknown field %q: the type has no such field", p)
			}
			if err := unknownField(child, v[k], p); err != nil {
				return err
			}
		}
	case []any:
		if s.Items == nil {
			return nil
		}
		for i, item := range v {
			if err := unknownField(s.Items.Schema, item, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func normalizeNumbers(v any) any {
	switch v := v.(type) {
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return int64(v)
		}
	case []any:
		for i := range v {
			v[i] = normalizeNumbers(v[i])
		}
	case map[string]any:
		for k := range v {
			v[k] = normalizeNumbers(v[k])
		}
	}
	return v
}

// checkRanges rejects minimum > maximum and the like, which no value fits,
// and a map list without keys.
func (b *builder) checkRanges(path string, s *apiextensionsv1.JSONSchemaProps) {
	if s.Minimum != nil && s.Maximum != nil && *s.Minimum > *s.Maximum {
		b.fail(path, "minimum %v is greater than maximum %v", *s.Minimum, *s.Maximum)
	}
	if s.MinLength != nil && s.MaxLength != nil && *s.MinLength > *s.MaxLength {
		b.fail(path, "minLength %d is greater than maxLength %d", *s.MinLength, *s.MaxLength)
	}
	if s.MinItems != nil && s.MaxItems != nil && *s.MinItems > *s.MaxItems {
		b.fail(path, "minItems %d is greater than maxItems %d", *s.MinItems, *s.MaxItems)
	}
	if s.XListType != nil && *s.XListType == "map" && len(s.XListMapKeys) == 0 {
		b.fail(path, "listType=map needs at least one listMapKey=FIELD naming the field that identifies an item")
	}
}
