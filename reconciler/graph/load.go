package graph

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Parse reads every definition in one (multi-document) YAML source.
// Documents of other kinds are skipped. Structural problems in a definition
// (unknown fields, wrong types) are returned as Errors naming the source
// and field path; the definitions without such problems are returned.
func Parse(data []byte, source string) ([]*ResourceGraphDefinition, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []*ResourceGraphDefinition
	var errs []error
	multi := bytes.Contains(data, []byte("\n---")) || bytes.HasPrefix(data, []byte("---"))
	for idx := 0; ; idx++ {
		doc, err := reader.Read()
		if err == io.EOF {
			break
		}
		src := source
		if multi {
			src = fmt.Sprintf("%s#%d", source, idx)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: reading YAML: %w", src, err))
			break
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			idx--
			continue
		}
		obj, err := decodeYAML(doc)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: malformed YAML: %w", src, err))
			continue
		}
		if obj == nil {
			idx--
			continue
		}
		if !isRGD(obj) {
			continue
		}
		if err := checkAPIVersion(obj, src); err != nil {
			errs = append(errs, err)
			continue
		}
		// A definition with structural problems is reported, not returned:
		// building it would only repeat them.
		rgd, perr := fromMap(obj, src)
		if perr != nil {
			errs = append(errs, perr)
			continue
		}
		out = append(out, rgd)
	}
	return out, errors.Join(errs...)
}

func isRGD(obj map[string]any) bool {
	kind, _ := obj["kind"].(string)
	apiVersion, _ := obj["apiVersion"].(string)
	return (kind == Kind || kind == LegacyKind) && strings.HasPrefix(apiVersion, Group+"/")
}

// FromUnstructured reads a definition fetched from a cluster.
func FromUnstructured(u *unstructured.Unstructured) (*ResourceGraphDefinition, error) {
	if u == nil {
		return nil, errors.New("graph: nil object")
	}
	if !isRGD(u.Object) {
		return nil, fmt.Errorf("graph: %s %q is not a %s.%s", u.GetKind(), u.GetName(), Kind, Group)
	}
	obj := runtime.DeepCopyJSON(u.Object)
	rgd, err := fromMap(obj, "cluster")
	if rgd != nil {
		rgd.Generation, rgd.UID = u.GetGeneration(), u.GetUID()
	}
	return rgd, err
}

// decoder walks a JSON-like map, collecting every problem with its path.
type decoder struct {
	rgd string
	// fromCluster is set for graphs read from an API server: a field
	// kroscope does not know there was accepted by the cluster's RGD CRD,
	// so it is a newer kro feature rather than a typo.
	fromCluster bool
	errs        Errors
}

func (d *decoder) errorf(path, fix, format string, args ...any) {
	d.errs = append(d.errs, &Error{RGD: d.rgd, Path: path, Message: fmt.Sprintf(format, args...), Fix: fix})
}

// object returns v as a map, or records an error when it is something else.
func (d *decoder) object(v any, path string) map[string]any {
	if v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		d.errorf(path, "", "must be an object, got %s", typeName(v))
	}
	return m
}

func (d *decoder) str(v any, path string) string {
	if v == nil {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		d.errorf(path, "", "must be a string, got %s", typeName(v))
	}
	return s
}

func (d *decoder) strings(v any, path string) []string {
	return decodeList(d, v, path, "", "a list of strings", func(e any, p string) (string, bool) {
		return d.str(e, p), true
	})
}

// decodeList reads v as a list, or records an error (with fix) when it is
// something else, and each element at its path with one, keeping those it
// accepts. A list, even an empty one, gives a non-nil slice.
func decodeList[T any](d *decoder, v any, path, fix, want string, one func(e any, path string) (T, bool)) []T {
	if v == nil {
		return nil
	}
	l, ok := v.([]any)
	if !ok {
		d.errorf(path, fix, "must be %s, got %s", want, typeName(v))
		return nil
	}
	out := make([]T, 0, len(l))
	for i, e := range l {
		if t, ok := one(e, fmt.Sprintf("%s[%d]", path, i)); ok {
			out = append(out, t)
		}
	}
	return out
}

// known reports fields of m not in allowed as errors. In a graph read from
// a cluster such a field is never ignored: serving the graph without it
// would silently change what it means.
func (d *decoder) known(m map[string]any, path string, allowed ...string) {
	for _, k := range sortedKeys(m) {
		if contains(allowed, k) {
			continue
		}
		if d.fromCluster {
			d.errorf(joinPath(path, k), "upgrade kroscope, or remove the field from the graph",
				"needs a newer kroscope: field %s", joinPath(path, k))
			continue
		}
		d.errorf(joinPath(path, k), "allowed fields: "+strings.Join(allowed, ", "), "unknown field %q", k)
	}
}

// stringMap reads a map of strings (labels, annotations).
func (d *decoder) stringMap(v any, path string) map[string]string {
	m := d.object(v, path)
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for _, k := range sortedKeys(m) {
		out[k] = d.str(m[k], joinPath(path, k))
	}
	return out
}

func fromMap(obj map[string]any, source string) (*ResourceGraphDefinition, error) {
	d := &decoder{rgd: source, fromCluster: source == "cluster"}
	rgd := &ResourceGraphDefinition{Source: source, OldKind: obj["kind"] == LegacyKind, Object: obj}
	meta := d.object(obj["metadata"], "metadata")
	rgd.Name = d.str(meta["name"], "metadata.name")
	if rgd.Name != "" {
		d.rgd = rgd.Name
		if source != "cluster" {
			d.rgd = rgd.Name + " (" + source + ")"
		}
	}
	if g, ok := meta["generation"].(int64); ok {
		rgd.Generation = g
	}
	spec := d.object(obj["spec"], "spec")
	if spec == nil {
		d.errorf("spec", "add spec.schema and spec.resources", "spec is missing")
		return rgd, d.errs
	}
	d.known(spec, "spec", "schema", "resources", "defaultServiceAccounts")
	d.schema(&rgd.Spec.Schema, spec["schema"])
	if sa := d.object(spec["defaultServiceAccounts"], "spec.defaultServiceAccounts"); sa != nil {
		rgd.Spec.DefaultServiceAccounts = map[string]string{}
		for _, k := range sortedKeys(sa) {
			rgd.Spec.DefaultServiceAccounts[k] = d.str(sa[k], joinPath("spec.defaultServiceAccounts", k))
		}
	}
	if rs := spec["resources"]; rs != nil {
		list, ok := rs.([]any)
		if !ok {
			d.errorf("spec.resources", "", "must be a list, got %s", typeName(rs))
		}
		for i, r := range list {
			rgd.Spec.Resources = append(rgd.Spec.Resources, d.resource(r, fmt.Sprintf("spec.resources[%d]", i)))
		}
	}
	if len(d.errs) > 0 {
		return rgd, d.errs
	}
	return rgd, nil
}

func (d *decoder) schema(s *Schema, v any) {
	m := d.object(v, "spec.schema")
	if m == nil {
		d.errorf("spec.schema", "add spec.schema with apiVersion, kind and spec", "spec.schema is missing")
		return
	}
	d.known(m, "spec.schema", "apiVersion", "kind", "group", "scope", "shortNames", "categories",
		"metadata", "spec", "status", "types", "additionalPrinterColumns", "validation")
	s.APIVersion = d.str(m["apiVersion"], "spec.schema.apiVersion")
	s.Kind = d.str(m["kind"], "spec.schema.kind")
	s.Group = d.str(m["group"], "spec.schema.group")
	s.Scope = d.str(m["scope"], "spec.schema.scope")
	switch s.Scope {
	case "", ScopeNamespaced, ScopeCluster:
	default:
		d.errorf("spec.schema.scope", "use Namespaced or Cluster", "scope %q is not Namespaced or Cluster", s.Scope)
	}
	s.ShortNames = d.names(m["shortNames"], "spec.schema.shortNames")
	s.Categories = d.names(m["categories"], "spec.schema.categories")
	if md := d.object(m["metadata"], "spec.schema.metadata"); md != nil {
		d.known(md, "spec.schema.metadata", "labels", "annotations")
		s.Metadata.Labels = d.stringMap(md["labels"], "spec.schema.metadata.labels")
		s.Metadata.Annotations = d.stringMap(md["annotations"], "spec.schema.metadata.annotations")
	}
	s.Spec = d.object(m["spec"], "spec.schema.spec")
	s.Status = d.object(m["status"], "spec.schema.status")
	s.Types = d.object(m["types"], "spec.schema.types")
	if cols, ok := m["additionalPrinterColumns"]; ok && cols != nil {
		data, _ := yaml.Marshal(cols)
		if err := yaml.UnmarshalStrict(data, &s.AdditionalPrinterColumns); err != nil {
			d.errorf("spec.schema.additionalPrinterColumns", "", "invalid: %v", err)
		}
	}
	if vs := m["validation"]; vs != nil {
		list, ok := vs.([]any)
		if !ok {
			d.errorf("spec.schema.validation", "", "must be a list, got %s", typeName(vs))
		}
		for i, e := range list {
			p := fmt.Sprintf("spec.schema.validation[%d]", i)
			em := d.object(e, p)
			d.known(em, p, "expression", "message")
			s.Validation = append(s.Validation, Validation{
				Expression: d.str(em["expression"], p+".expression"),
				Message:    d.str(em["message"], p+".message"),
			})
		}
	}
}

// Limits kro's RGD CRD puts on shortNames and categories.
const (
	maxNames      = 32
	maxNameLength = 63
)

var namePattern = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)

// names reads shortNames or categories, checking what kro's CRD checks
// (files never went through it): at most 32 unique lower-case DNS labels.
func (d *decoder) names(v any, path string) []string {
	list := d.strings(v, path)
	if len(list) > maxNames {
		d.errorf(path, "", "at most %d entries, got %d", maxNames, len(list))
	}
	seen := map[string]bool{}
	for i, n := range list {
		p := fmt.Sprintf("%s[%d]", path, i)
		switch {
		case len(n) > maxNameLength:
			d.errorf(p, "", "%q is longer than %d characters", n, maxNameLength)
		case !namePattern.MatchString(n):
			d.errorf(p, "use lower-case letters, digits and '-', starting with a letter", "%q is not a lower-case DNS label", n)
		case seen[n]:
			d.errorf(p, "remove the duplicate", "%q is listed twice", n)
		}
		seen[n] = true
	}
	return list
}

func (d *decoder) resource(v any, path string) ResourceSpec {
	var r ResourceSpec
	m := d.object(v, path)
	if m == nil {
		return r
	}
	d.known(m, path, "id", "template", "externalRef", "readyWhen", "includeWhen", "forEach")
	r.ForEach = d.forEach(m["forEach"], path+".forEach")
	r.ID = d.str(m["id"], path+".id")
	r.Template = d.object(m["template"], path+".template")
	r.ReadyWhen = d.strings(m["readyWhen"], path+".readyWhen")
	r.IncludeWhen = d.strings(m["includeWhen"], path+".includeWhen")
	if er := d.object(m["externalRef"], path+".externalRef"); er != nil {
		p := path + ".externalRef"
		d.known(er, p, "apiVersion", "kind", "metadata")
		r.ExternalRef = &ExternalRef{
			APIVersion: d.str(er["apiVersion"], p+".apiVersion"),
			Kind:       d.str(er["kind"], p+".kind"),
		}
		md := d.object(er["metadata"], p+".metadata")
		d.known(md, p+".metadata", "name", "namespace", "selector")
		r.ExternalRef.Name = d.str(md["name"], p+".metadata.name")
		r.ExternalRef.Namespace = d.str(md["namespace"], p+".metadata.namespace")
		r.ExternalRef.Selector = d.object(md["selector"], p+".metadata.selector")
	}
	return r
}

// forEach reads a forEach list: every entry is a map with exactly one
// iterator name, whose value is the dimension's expression.
func (d *decoder) forEach(v any, path string) []ForEachSpec {
	return decodeList(d, v, path, "write a list of {iterator: ${listExpression}}", "a list", func(e any, p string) (ForEachSpec, bool) {
		m := d.object(e, p)
		if m == nil {
			return ForEachSpec{}, false
		}
		if len(m) != 1 {
			d.errorf(p, "split it: one {iterator: ${listExpression}} per entry; several entries give their cartesian product",
				"entry must have exactly one iterator, got %d", len(m))
			return ForEachSpec{}, false
		}
		k := sortedKeys(m)[0]
		return ForEachSpec{Name: k, Expression: d.str(m[k], joinPath(p, k))}, true
	})
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case int64, int, int32, float64, float32:
		return "number"
	case []any:
		return "list"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// decodeYAML decodes one document into JSON-like values with whole numbers
// as int64, as unstructured objects hold them.
func decodeYAML(doc []byte) (map[string]any, error) {
	// Strict: a key given twice in one mapping is an error, not "the last
	// one wins" (the first would be silently ignored).
	js, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		// yaml.v2 lists its problems on indented lines: one line per error.
		return nil, errors.New(strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "unmarshal errors:\n", "")), " "))
	}
	var obj map[string]any
	if err := utiljson.Unmarshal(js, &obj); err != nil {
		return nil, err
	}
	return obj, nil
}
