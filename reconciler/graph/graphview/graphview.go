// Package graphview draws a built graph for people and tools: a layered
// text drawing for the terminal, JSON, and Graphviz dot.
package graphview

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/kroscope/kroscope/reconciler/graph"
)

// Summary is the JSON form of a graph.
type Summary struct {
	Name       string `json:"name"`
	Source     string `json:"source,omitempty"`
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Resource   string `json:"resource"`
	// Scope is the instance kind's scope: Namespaced or Cluster.
	Scope            string     `json:"scope"`
	TopologicalOrder []string   `json:"topologicalOrder"`
	ReverseOrder     []string   `json:"reverseOrder"`
	Layers           [][]string `json:"layers"`
	Resources        []Node     `json:"resources"`
	Status           []string   `json:"status,omitempty"`
	Schema           Schema     `json:"schema"`
}

// Node is one resource in a Summary.
type Node struct {
	ID         string `json:"id"`
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Resource   string `json:"resource"`
	Namespaced bool   `json:"namespaced"`
	External   bool   `json:"external,omitempty"`
	// ExternalCollection: an externalRef by label selector (a list).
	ExternalCollection bool     `json:"externalCollection,omitempty"`
	Layer              int      `json:"layer"`
	Dependencies       []string `json:"dependencies"`
	Dependents         []string `json:"dependents"`
	ReadyWhen          []string `json:"readyWhen,omitempty"`
	IncludeWhen        []string `json:"includeWhen,omitempty"`
	// ForEach are a collection's iterators, in declaration order.
	ForEach []ForEach `json:"forEach,omitempty"`
}

// ForEach is one forEach iterator: Name takes each element of Expression.
type ForEach struct {
	Name       string `json:"name"`
	Expression string `json:"expression"`
}

// scope is the instance kind's scope as spec.schema.scope spells it.
func scope(g *graph.Graph) string {
	if g.Instance.Namespaced {
		return graph.ScopeNamespaced
	}
	return graph.ScopeCluster
}

// Summarize describes g; resources appear in topological order.
func Summarize(g *graph.Graph) Summary {
	layer := map[string]int{}
	for i, l := range g.Layers {
		for _, id := range l {
			layer[id] = i
		}
	}
	s := Summary{
		Name:             g.Name,
		Source:           g.Source,
		APIVersion:       g.Instance.GVK.GroupVersion().String(),
		Kind:             g.Instance.GVK.Kind,
		Resource:         g.Instance.GVR.GroupResource().String(),
		Scope:            scope(g),
		TopologicalOrder: nonNil(g.TopologicalOrder),
		ReverseOrder:     nonNil(g.ReverseTopologicalOrder()),
		Layers:           g.Layers,
		Resources:        []Node{},
	}
	if s.Layers == nil {
		s.Layers = [][]string{}
	}
	for _, id := range g.TopologicalOrder {
		r := g.Resources[id]
		n := Node{
			ID:                 id,
			APIVersion:         r.GVK.GroupVersion().String(),
			Kind:               r.GVK.Kind,
			Resource:           r.GVR.GroupResource().String(),
			Namespaced:         r.Namespaced,
			External:           r.External,
			ExternalCollection: r.ExternalCollection,
			Layer:              layer[id],
			Dependencies:       nonNil(r.Dependencies),
			Dependents:         nonNil(g.Dependents(id)),
		}
		for _, e := range r.ReadyWhen {
			n.ReadyWhen = append(n.ReadyWhen, "${"+e.Source+"}")
		}
		for _, e := range r.IncludeWhen {
			n.IncludeWhen = append(n.IncludeWhen, "${"+e.Source+"}")
		}
		for _, d := range r.ForEach {
			n.ForEach = append(n.ForEach, ForEach{Name: d.Name, Expression: "${" + d.Expression.Source + "}"})
		}
		s.Resources = append(s.Resources, n)
	}
	for _, f := range g.Status {
		s.Status = append(s.Status, f.Path)
	}
	s.Schema = summarizeSchema(g)
	return s
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// JSON writes the summaries of gs as one indented JSON array.
func JSON(w io.Writer, gs []*graph.Graph) error {
	out := make([]Summary, 0, len(gs))
	for _, g := range gs {
		out = append(out, Summarize(g))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// Dot writes g as a Graphviz digraph: an edge runs from a resource to each
// resource that depends on it, and each layer is one rank.
func Dot(w io.Writer, g *graph.Graph) error {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %s {\n", dotID(g.Name))
	b.WriteString("  rankdir=LR;\n  node [shape=box, fontname=\"monospace\"];\n")
	fmt.Fprintf(&b, "  label=%s;\n", dotID(g.Instance.GVK.Kind+" ("+g.Name+")"))
	for i, l := range g.Layers {
		fmt.Fprintf(&b, "  subgraph layer%d {\n    rank=same;\n", i)
		for _, id := range l {
			r := g.Resources[id]
			label := id + "\\n" + r.GVK.Kind
			style := ""
			if r.External {
				label += "\\n(external)"
				style = ", style=dashed"
			}
			if len(r.IncludeWhen) > 0 {
				label += "\\n(conditional)"
			}
			fmt.Fprintf(&b, "    %s [label=\"%s\"%s];\n", dotID(id), label, style)
		}
		b.WriteString("  }\n")
	}
	for _, id := range g.TopologicalOrder {
		for _, dep := range g.Resources[id].Dependencies {
			fmt.Fprintf(&b, "  %s -> %s;\n", dotID(dep), dotID(id))
		}
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func dotID(s string) string { return fmt.Sprintf("%q", s) }

// Text writes a drawing of g for the terminal: the instance kind, the
// topological order, then each layer with its resources (id, kind, what
// each depends on and conditions).
func Text(w io.Writer, g *graph.Graph) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s  (%s, %s)\n", g.Name, g.Instance.GVK.Kind, g.Instance.GVK.GroupVersion(), g.Instance.GVR.Resource)
	if g.Source != "" {
		fmt.Fprintf(&b, "  source: %s\n", g.Source)
	}
	fmt.Fprintf(&b, "  scope:  %s\n", scope(g))
	fmt.Fprintf(&b, "  order:  %s\n", orNone(strings.Join(g.TopologicalOrder, " → ")))
	if len(g.Status) > 0 {
		var paths []string
		for _, f := range g.Status {
			paths = append(paths, f.Path)
		}
		fmt.Fprintf(&b, "  status: %s\n", strings.Join(paths, ", "))
	}
	idw := 0
	for _, id := range g.TopologicalOrder {
		idw = max(idw, len(id))
	}
	kindw := 0
	for _, r := range g.Resources {
		kindw = max(kindw, len(r.GVK.Kind))
	}
	for i, l := range g.Layers {
		fmt.Fprintf(&b, "\n  layer %d\n", i)
		for j, id := range l {
			textResource(&b, g.Resources[id], j == len(l)-1, idw, kindw)
		}
	}
	for _, r := range g.Resources {
		if r.External {
			b.WriteString("\n  * external: read, never written\n")
			break
		}
	}
	textSchema(&b, summarizeSchema(g))
	_, err := io.WriteString(w, b.String())
	return err
}

// textResource writes one resource of a layer (the last one closes the
// branch), its id and kind in columns idw and kindw wide.
func textResource(b *strings.Builder, r *graph.Resource, last bool, idw, kindw int) {
	branch, cont := "├─", "│ "
	if last {
		branch, cont = "└─", "  "
	}
	deps := "(no dependencies)"
	if len(r.Dependencies) > 0 {
		deps = "← " + strings.Join(r.Dependencies, ", ")
	}
	kind := r.GVK.Kind
	if r.External {
		kind += "*"
	}
	fmt.Fprintf(b, "  %s %-*s  %-*s  %s\n", branch, idw, r.ID, kindw+1, kind, deps)
	for _, d := range r.ForEach {
		fmt.Fprintf(b, "  %s %-*s  forEach %s ${%s}\n", cont, idw, "", d.Name, d.Expression.Source)
	}
	for _, e := range r.IncludeWhen {
		fmt.Fprintf(b, "  %s %-*s  includeWhen ${%s}\n", cont, idw, "", e.Source)
	}
	for _, e := range r.ReadyWhen {
		fmt.Fprintf(b, "  %s %-*s  readyWhen   ${%s}\n", cont, idw, "", e.Source)
	}
}

// textSchema writes the schema summary: spec fields with their types,
// defaults and markers, status fields with their expressions.
func textSchema(b *strings.Builder, s Schema) {
	if len(s.Spec) > 0 {
		b.WriteString("\n  spec\n")
		pw, tw := 0, 0
		for _, f := range s.Spec {
			pw, tw = max(pw, len(f.Path)), max(tw, len(f.Type))
		}
		for _, f := range s.Spec {
			fmt.Fprintf(b, "    %s\n", strings.TrimRight(fmt.Sprintf("%-*s  %-*s  %s", pw, f.Path, tw, f.Type, strings.Join(SpecMarks(f), "  ")), " "))
		}
	}
	if len(s.Status) > 0 {
		b.WriteString("\n  status\n")
		pw, tw := 0, 0
		for _, f := range s.Status {
			pw, tw = max(pw, len(f.Path)), max(tw, len(f.Type))
		}
		for _, f := range s.Status {
			fmt.Fprintf(b, "    %-*s  %-*s  %s\n", pw, f.Path, tw, f.Type, f.Expression)
		}
	}
}

// SpecMarks are a spec field's default, required and other markers as
// words ("default 2", "required", "minimum=1"): what a reader scans for.
func SpecMarks(f SpecField) []string {
	var out []string
	if f.Default != "" {
		out = append(out, "default "+f.Default)
	}
	if f.Required {
		out = append(out, "required")
	}
	return append(out, f.Markers...)
}

func orNone(s string) string {
	if s == "" {
		return "(no resources)"
	}
	return s
}
