package plan

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Text writes plans as an operator reads them: per instance, one line per
// object (+ create, ~ change, - prune, ! fail, ? known after apply) and
// its fields below, then the summary line.
func Text(w io.Writer, plans []*Plan) error {
	b := &strings.Builder{}
	for _, p := range plans {
		fmt.Fprintf(b, "Graph %s (kind %s)\n", p.Graph, p.Kind)
		writeSchema(b, p.Schema)
		if len(p.Instances) == 0 {
			b.WriteString("  no instances\n")
		}
		for _, in := range p.Instances {
			writeInstance(b, in)
		}
		b.WriteString("\n")
	}
	b.WriteString(Summarize(plans).Line() + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func writeSchema(b *strings.Builder, s *Schema) {
	switch {
	case s == nil:
		b.WriteString("  schema: not compared (this user may not read CRDs)\n")
	case s.New:
		fmt.Fprintf(b, "  + CRD %s (new kind)\n", s.CRD)
	case len(s.Breaking) > 0:
		fmt.Fprintf(b, "  ! CRD %s: breaking schema change (kro refuses it unless allowed):\n", s.CRD)
		for _, c := range s.Breaking {
			fmt.Fprintf(b, "      %s\n", c)
		}
	}
}

func writeInstance(b *strings.Builder, in Instance) {
	name := in.Name
	if in.Namespace != "" {
		name = in.Namespace + "/" + in.Name
	}
	if len(in.Objects) == 0 {
		fmt.Fprintf(b, "  instance %s: no changes\n", name)
		return
	}
	fmt.Fprintf(b, "  instance %s:\n", name)
	for _, o := range in.Objects {
		b.WriteString("    " + objectLine(o) + "\n")
		for _, f := range o.Fields {
			if o.Op == OpCreate && Bookkeeping(f.Path) {
				continue
			}
			b.WriteString("        " + fieldLine(f) + "\n")
		}
	}
}

func objectLine(o Object) string {
	s := Sign(o.Op) + " "
	if o.Name != "" {
		s += o.Kind + " " + qualified(o.Namespace, o.Name)
		if o.Resource != "" {
			s += " (" + o.Resource + ")"
		}
	} else {
		s += "resource " + o.Resource
	}
	if o.Op == OpPending {
		s += ": known after apply"
	}
	if o.Message != "" {
		s += ": " + o.Message
	}
	if o.ClientSide != "" {
		s += " [client-side diff: " + o.ClientSide + "]"
	}
	return s
}

func qualified(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

func fieldLine(f Field) string {
	switch f.Op {
	case "+":
		return "+ " + f.Path + ": " + value(f.New)
	case "-":
		return "- " + f.Path + ": " + value(f.Old)
	}
	return "~ " + f.Path + ": " + value(f.Old) + " -> " + value(f.New)
}

// value is a field's value as compact JSON (a masked value as it is).
func value(v any) string {
	if s, ok := v.(string); ok && s == Sensitive {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// JSON writes plans and their summary as one JSON document, for CI.
func JSON(w io.Writer, plans []*Plan) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Plans   []*Plan `json:"plans"`
		Summary Summary `json:"summary"`
	}{plans, Summarize(plans)})
}
