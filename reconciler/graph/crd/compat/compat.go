// Package compat decides whether replacing an instance CRD's schema would
// break instances already stored under it, by the rules kro applies before it
// updates a generated CRD: a removed property, a changed type, a newly
// required field (or a new required property without a default), a removed
// enum value, an added or changed pattern, a tightened bound (minimum,
// maximum, minLength, maxLength, minItems, maxItems), a required field that
// lost its default, a renamed or unserved version, or a removed status
// subresource. Such a change is refused unless the graph carries the
// annotation kro.run/allow-breaking-changes: "true".
package compat

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// AllowAnnotation on a ResourceGraphDefinition lets breaking changes through.
const AllowAnnotation = "kro.run/allow-breaking-changes"

// Change is one breaking difference.
type Change struct {
	// Path is the schema path, e.g. "spec.properties.replicas.minimum"
	// (the root object's "properties" are left out: "spec.replicas").
	Path string
	// What says it in words, e.g. "property removed".
	What string
}

func (c Change) String() string { return c.Path + ": " + c.What }

// Breaking returns the breaking changes from old to new (nil when none).
// Only the first version is compared: generated CRDs have one.
func Breaking(old, new *apiextensionsv1.CustomResourceDefinition) []Change {
	if old == nil || new == nil || len(old.Spec.Versions) == 0 || len(new.Spec.Versions) == 0 {
		return nil
	}
	ov, nv := old.Spec.Versions[0], new.Spec.Versions[0]
	var out []Change
	if ov.Name != nv.Name {
		return []Change{{Path: "version", What: fmt.Sprintf("version %s replaced by %s", ov.Name, nv.Name)}}
	}
	if ov.Served && !nv.Served {
		out = append(out, Change{Path: "version.served", What: "no longer served"})
	}
	if ov.Subresources != nil && ov.Subresources.Status != nil && (nv.Subresources == nil || nv.Subresources.Status == nil) {
		out = append(out, Change{Path: "version.subresources.status", What: "status subresource removed"})
	}
	var os, ns *apiextensionsv1.JSONSchemaProps
	if ov.Schema != nil {
		os = ov.Schema.OpenAPIV3Schema
	}
	if nv.Schema != nil {
		ns = nv.Schema.OpenAPIV3Schema
	}
	c := &comparer{}
	c.schema("", os, ns)
	return append(out, c.out...)
}

// Summary renders changes for a condition or log line: every path, and what
// changed for the first few.
func Summary(changes []Change) string {
	const detailed = 5
	parts := make([]string, 0, detailed+1)
	for i, c := range changes {
		if i == detailed {
			parts = append(parts, fmt.Sprintf("and %d more", len(changes)-detailed))
			break
		}
		parts = append(parts, c.String())
	}
	return strings.Join(parts, "; ")
}

type comparer struct{ out []Change }

func (c *comparer) add(path, format string, args ...any) {
	c.out = append(c.out, Change{Path: strings.TrimPrefix(path, "."), What: fmt.Sprintf(format, args...)})
}

// schema compares one old schema with its new version: type, bounds,
// properties, required fields, enum values and list items.
func (c *comparer) schema(path string, o, n *apiextensionsv1.JSONSchemaProps) {
	switch {
	case o == nil:
		return
	case n == nil:
		c.add(path, "property removed")
		return
	}
	if o.Type != n.Type {
		c.add(path, "type changed from %s to %s", orNone(o.Type), orNone(n.Type))
		return
	}
	c.bounds(path, o, n)
	c.properties(path, o, n)
	c.required(path, o, n)
	c.enum(path, o, n)
	if o.Type == "array" {
		oi, ni := itemsOf(o), itemsOf(n)
		switch {
		case oi != nil && ni == nil:
			c.add(path+"[]", "item schema removed")
		case oi != nil:
			c.schema(path+"[]", oi, ni)
		}
	}
}

// bounds: a pattern may not be added or changed, and no bound narrowed.
func (c *comparer) bounds(path string, o, n *apiextensionsv1.JSONSchemaProps) {
	switch {
	case o.Pattern == n.Pattern, n.Pattern == "":
	case o.Pattern == "":
		c.add(path, "pattern %q added", n.Pattern)
	default:
		c.add(path, "pattern changed from %q to %q", o.Pattern, n.Pattern)
	}
	c.lower(path, "minimum", floatOf(o.Minimum), floatOf(n.Minimum))
	c.upper(path, "maximum", floatOf(o.Maximum), floatOf(n.Maximum))
	c.lower(path, "minLength", intOf(o.MinLength), intOf(n.MinLength))
	c.upper(path, "maxLength", intOf(o.MaxLength), intOf(n.MaxLength))
	c.lower(path, "minItems", intOf(o.MinItems), intOf(n.MinItems))
	c.upper(path, "maxItems", intOf(o.MaxItems), intOf(n.MaxItems))
}

// properties: none removed, each kept one compared, and no new required
// one without a default.
func (c *comparer) properties(path string, o, n *apiextensionsv1.JSONSchemaProps) {
	for _, name := range sortedKeys(o.Properties) {
		op := o.Properties[name]
		np, ok := n.Properties[name]
		if !ok {
			c.add(path+"."+name, "property removed")
			continue
		}
		c.schema(path+"."+name, &op, &np)
	}
	for _, name := range sortedKeys(n.Properties) {
		if _, existed := o.Properties[name]; existed {
			continue
		}
		np := n.Properties[name]
		if slices.Contains(n.Required, name) && !hasDefault(&np) {
			c.add(path+"."+name, "new required property without a default")
		}
	}
}

// required: an existing property may not become required, nor lose its
// default while required.
func (c *comparer) required(path string, o, n *apiextensionsv1.JSONSchemaProps) {
	for _, name := range n.Required {
		op, existed := o.Properties[name]
		if !existed {
			continue // a new property: judged by properties
		}
		if !slices.Contains(o.Required, name) {
			c.add(path+"."+name, "newly required")
			continue
		}
		np := n.Properties[name]
		if hasDefault(&op) && !hasDefault(&np) {
			c.add(path+"."+name, "required, and its default was removed")
		}
	}
}

// enum: no value of an existing enum removed.
func (c *comparer) enum(path string, o, n *apiextensionsv1.JSONSchemaProps) {
	if len(o.Enum) == 0 || len(n.Enum) == 0 {
		return
	}
	kept := map[string]bool{}
	for _, v := range n.Enum {
		kept[string(v.Raw)] = true
	}
	for _, v := range o.Enum {
		if !kept[string(v.Raw)] {
			c.add(path, "enum value %s removed", v.Raw)
		}
	}
}

// lower: a bound that may only stay, go down or go away.
func (c *comparer) lower(path, name string, o, n *float64) {
	switch {
	case n == nil:
	case o == nil:
		c.add(path, "%s %s added", name, num(*n))
	case *n > *o:
		c.add(path, "%s raised from %s to %s", name, num(*o), num(*n))
	}
}

// upper: a bound that may only stay, go up or go away.
func (c *comparer) upper(path, name string, o, n *float64) {
	switch {
	case n == nil:
	case o == nil:
		c.add(path, "%s %s added", name, num(*n))
	case *n < *o:
		c.add(path, "%s lowered from %s to %s", name, num(*o), num(*n))
	}
}

func floatOf(p *float64) *float64 { return p }

func intOf(p *int64) *float64 {
	if p == nil {
		return nil
	}
	f := float64(*p)
	return &f
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func orNone(t string) string {
	if t == "" {
		return "(none)"
	}
	return t
}

func hasDefault(p *apiextensionsv1.JSONSchemaProps) bool {
	return p.Default != nil && len(p.Default.Raw) > 0
}

func itemsOf(p *apiextensionsv1.JSONSchemaProps) *apiextensionsv1.JSONSchemaProps {
	if p.Items == nil {
		return nil
	}
	return p.Items.Schema
}

func sortedKeys(m map[string]apiextensionsv1.JSONSchemaProps) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
