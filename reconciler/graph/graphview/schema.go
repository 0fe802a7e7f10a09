package graphview

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/graph/simpleschema"
)

// Schema is a graph's SimpleSchema in brief: each spec field with its
// type, default and markers, read back from the instance CRD the graph
// generates (what the API server enforces), and each status field with the
// expression that fills it.
type Schema struct {
	Spec   []SpecField   `json:"spec"`
	Status []StatusField `json:"status"`
}

// SpecField is one leaf of the instance spec ("a.b", "items[]").
type SpecField struct {
	Path     string `json:"path"`
	Type     string `json:"type"`
	Default  string `json:"default,omitempty"` // as JSON
	Required bool   `json:"required,omitempty"`
	// Markers are the other SimpleSchema markers, as written:
	// "minimum=1", "enum=a,b", "immutable".
	Markers     []string `json:"markers,omitempty"`
	Description string   `json:"description,omitempty"`
}

// StatusField is one status field and the expression that fills it.
type StatusField struct {
	Path       string `json:"path"`
	Type       string `json:"type,omitempty"`
	Expression string `json:"expression"`
}

// maxSchemaFields bounds the summary of one graph: a schema is untrusted
// input and the summary is for people.
const maxSchemaFields = 500

// summarizeSchema reads g's instance CRD and status fields.
func summarizeSchema(g *graph.Graph) Schema {
	s := Schema{Spec: []SpecField{}, Status: []StatusField{}}
	root := crdRoot(g)
	if root != nil {
		if spec, ok := root.Properties["spec"]; ok {
			walkSpec(&s.Spec, "", &spec, false, 0)
		}
	}
	var status *apiextensionsv1.JSONSchemaProps
	if root != nil {
		if st, ok := root.Properties["status"]; ok {
			status = &st
		}
	}
	for _, f := range g.Status {
		s.Status = append(s.Status, StatusField{Path: f.Path, Type: typeAt(status, f.Segments), Expression: f.Raw})
	}
	return s
}

func crdRoot(g *graph.Graph) *apiextensionsv1.JSONSchemaProps {
	crd := g.Instance.CRD
	if crd == nil || len(crd.Spec.Versions) == 0 || crd.Spec.Versions[0].Schema == nil {
		return nil
	}
	return crd.Spec.Versions[0].Schema.OpenAPIV3Schema
}

// walkSpec appends the leaves under s (at path) to out: an object's
// properties one by one, everything else as one field.
func walkSpec(out *[]SpecField, path string, s *apiextensionsv1.JSONSchemaProps, required bool, depth int) {
	if len(*out) >= maxSchemaFields {
		return
	}
	if s.Type == "object" && len(s.Properties) > 0 && depth < 16 {
		for _, n := range slices.Sorted(maps.Keys(s.Properties)) {
			p := s.Properties[n]
			walkSpec(out, join(path, n), &p, slices.Contains(s.Required, n), depth+1)
		}
		return
	}
	if path == "" {
		return
	}
	f := SpecField{Path: path, Type: typeName(s), Required: required, Markers: markers(s), Description: s.Description}
	if s.Default != nil {
		f.Default = string(s.Default.Raw)
	}
	*out = append(*out, f)
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// typeName spells a schema's type as SimpleSchema does: "string",
// "[]string", "map[string]integer", "object".
func typeName(s *apiextensionsv1.JSONSchemaProps) string {
	switch {
	case s == nil:
		return ""
	case s.Type == "array" && s.Items != nil && s.Items.Schema != nil:
		return "[]" + typeName(s.Items.Schema)
	case s.Type == "object" && s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
		return "map[string]" + typeName(s.AdditionalProperties.Schema)
	case s.XIntOrString:
		return "int-or-string"
	case s.Type == "" && s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields:
		return "any"
	}
	return s.Type
}

// markers spells s's constraints as the SimpleSchema markers that set them.
func markers(s *apiextensionsv1.JSONSchemaProps) []string {
	var out []string
	add := func(k, v string) { out = append(out, k+"="+v) }
	if len(s.Enum) > 0 {
		vals := make([]string, 0, len(s.Enum))
		for _, e := range s.Enum {
			var v any
			if json.Unmarshal(e.Raw, &v) == nil {
				vals = append(vals, fmt.Sprint(v))
			}
		}
		add(simpleschema.MarkerEnum, strings.Join(vals, ","))
	}
	bound := func(k string, f *float64) {
		if f != nil {
			add(k, strconv.FormatFloat(*f, 'g', -1, 64))
		}
	}
	bound(simpleschema.MarkerMinimum, s.Minimum)
	bound(simpleschema.MarkerMaximum, s.Maximum)
	count := func(k string, n *int64) {
		if n != nil {
			add(k, strconv.FormatInt(*n, 10))
		}
	}
	count(simpleschema.MarkerMinLength, s.MinLength)
	count(simpleschema.MarkerMaxLength, s.MaxLength)
	count(simpleschema.MarkerMinItems, s.MinItems)
	count(simpleschema.MarkerMaxItems, s.MaxItems)
	if s.Pattern != "" {
		add(simpleschema.MarkerPattern, s.Pattern)
	}
	if s.UniqueItems {
		out = append(out, simpleschema.MarkerUniqueItems)
	}
	for _, v := range s.XValidations {
		if v.Rule == simpleschema.ImmutableRule {
			out = append(out, simpleschema.MarkerImmutable)
			continue
		}
		add(simpleschema.MarkerValidation, v.Rule)
	}
	return out
}

// typeAt is the type of the status schema at segs ("" when unknown).
func typeAt(s *apiextensionsv1.JSONSchemaProps, segs []any) string {
	for _, seg := range segs {
		if s == nil {
			return ""
		}
		switch k := seg.(type) {
		case string:
			p, ok := s.Properties[k]
			if !ok {
				return ""
			}
			s = &p
		case int:
			if s.Items == nil {
				return ""
			}
			s = s.Items.Schema
		}
	}
	return typeName(s)
}
