package graphs

import (
	"fmt"
	"strings"
)

// RGD returns a ResourceGraphDefinition named name whose schema has kind
// and, below it, schema (YAML written from column 0: spec:, status:,
// scope: …; nothing when empty), and whose resources are the items given
// (as ConfigMap and Resource return them). A test writes only what makes
// its graph differ; the lines every graph has are written here.
func RGD(name, kind, schema string, resources ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata:
  name: %s
spec:
  schema:
    apiVersion: v1alpha1
    kind: %s
`, name, kind)
	b.WriteString(Indent(schema, 4))
	b.WriteString("  resources:\n")
	for _, r := range resources {
		b.WriteString(Indent(r, 2))
	}
	return b.String()
}

// Resource returns an item of spec.resources: id, then fields (YAML
// written from column 0: template:, externalRef:, readyWhen: …).
func Resource(id, fields string) string {
	return "- id: " + id + "\n" + Indent(fields, 2)
}

// ConfigMap returns an item of spec.resources whose template is a
// ConfigMap named name with data (YAML written from column 0; no data
// field when empty). fields (YAML from column 0: readyWhen:, includeWhen:,
// forEach: …) stand between the id and the template.
func ConfigMap(id, name, data string, fields ...string) string {
	if data != "" {
		data = "data:\n" + Indent(data, 2)
	}
	return Template(id, "v1", "ConfigMap", "name: "+name, data, fields...)
}

// Template returns an item of spec.resources whose template is an object
// of apiVersion and kind with metadata and, after it, body (both YAML
// written from column 0); fields as for ConfigMap.
func Template(id, apiVersion, kind, metadata, body string, fields ...string) string {
	t := "template:\n  apiVersion: " + apiVersion + "\n  kind: " + kind + "\n  metadata:\n" + Indent(metadata, 4) + Indent(body, 2)
	return item(id, fields, t)
}

// item is Resource's with fields (empty ones left out), then last.
func item(id string, fields []string, last string) string {
	var parts []string
	for _, f := range append(fields[:len(fields):len(fields)], last) {
		if f = strings.Trim(f, "\n"); f != "" {
			parts = append(parts, f)
		}
	}
	return Resource(id, strings.Join(parts, "\n"))
}

// Instance returns an instance of kind (group kro.run, version v1alpha1)
// named name with spec (YAML written from column 0; an empty spec object
// when empty).
func Instance(kind, name, spec string) string {
	doc := "apiVersion: kro.run/v1alpha1\nkind: " + kind + "\nmetadata:\n  name: " + name + "\n"
	if spec == "" {
		return doc + "spec: {}\n"
	}
	return doc + "spec:\n" + Indent(spec, 2)
}

// Indent returns s with n spaces before each of its non-empty lines and a
// line end after the last ("" stays "").
func Indent(s string, n int) string {
	s = strings.Trim(s, "\n")
	if s == "" {
		return ""
	}
	pad := strings.Repeat(" ", n)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = pad + l
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// ExternalRef returns an item of spec.resources that reads, and never
// writes, the object of apiVersion and kind named name in the instance's
// namespace; fields as for ConfigMap.
func ExternalRef(id, apiVersion, kind, name string, fields ...string) string {
	ref := "externalRef:\n  apiVersion: " + apiVersion + "\n  kind: " + kind + "\n  metadata:\n    name: " + name + "\n"
	return item(id, fields, ref)
}

// Deployment returns an item of spec.resources whose template is a
// Deployment named name with one replica, its pods labelled app:
// ${schema.metadata.name} and running one container, app, whose other
// fields are container (YAML written from column 0: image: …); fields as
// for ConfigMap.
func Deployment(id, name, container string, fields ...string) string {
	pods := Workload("${schema.metadata.name}", "containers:\n- name: app\n"+Indent(container, 2))
	return Template(id, "apps/v1", "Deployment", "name: "+name, "spec:\n  replicas: 1\n"+Indent(pods, 2), fields...)
}

// Workload returns the selector and pod template of a workload's spec
// (Deployment, StatefulSet …) whose pods are labelled app: app and have
// the pod spec pod (YAML written from column 0: containers: …).
func Workload(app, pod string) string {
	return "selector:\n  matchLabels:\n    app: " + app + "\ntemplate:\n  metadata:\n    labels:\n      app: " + app + "\n  spec:\n" + Indent(pod, 4)
}

// Annotated returns the graph doc (as RGD writes it) with annotations
// (YAML written from column 0) in its metadata.
func Annotated(doc, annotations string) string {
	head, rest, _ := strings.Cut(doc, "\nspec:\n")
	return head + "\n  annotations:\n" + Indent(annotations, 4) + "spec:\n" + rest
}
