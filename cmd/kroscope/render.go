package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kroscope/kroscope/memcluster"
	"github.com/kroscope/kroscope/plan"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/termtext"
)

func newRenderCmd() *cobra.Command {
	var (
		instanceFile string
		sets         []string
		schemas      *schemaFlags
		bf           buildFlags
	)
	cmd := &cobra.Command{
		Use:   "render GRAPH_FILE -i INSTANCE_FILE [--set spec.x=y]...",
		Short: "Print the children a graph makes for an instance, as YAML (no cluster needed)",
		Long: `render builds the graph (templates of built-in kinds type-checked against
the embedded Kubernetes schemas), runs kroscope's reconciler for the instance
over an empty in-memory cluster, and prints the children it creates, as YAML.
Resources that wait for a status only a real controller writes, are skipped
or fail are listed as comments at the end. Secret values are masked.
--set sets one field of the instance (spec.replicas=3); the value is YAML.
A file of several instances renders each, after a "# instance NAME" line.
An instance that names no namespace is in -n, else "default". The output
is the same on every run: UIDs are derived, not random.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if instanceFile == "" {
				return errors.New("render needs an instance: -i INSTANCE_FILE")
			}
			errOut := termtext.Writer(cmd.ErrOrStderr())
			ty, err := schemas.typing(cmd)
			if err != nil {
				return err
			}
			gs, err := loadAndBuild(cmd, args, errOut, bf, ty)
			if err != nil {
				return err
			}
			insts, err := plan.ReadObjects([]string{instanceFile}, bf.maxFileSize)
			if err != nil {
				return err
			}
			ns := ""
			if f := cmd.Flags().Lookup("namespace"); f != nil && f.Changed {
				ns = f.Value.String()
			}
			w := termtext.Writer(cmd.OutOrStdout())
			for _, inst := range insts {
				if err := renderOne(cmd.Context(), w, gs, inst, ns, sets, len(insts) > 1); err != nil {
					return fmt.Errorf("%s: %w", instanceFile, err)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&instanceFile, "instance", "i", "", "instance file (YAML)")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "set a field of the instance: PATH=VALUE (spec.replicas=3), VALUE in YAML")
	schemas = addSchemaFlags(cmd.Flags())
	kubeFlags.AddNamed(cmd.Flags(), "namespace")
	bf.add(cmd.Flags())
	return cmd
}

// renderOne renders inst with the graph that serves its kind, in
// namespace ns when it names none (an instance naming another is refused,
// as kubectl refuses it), --set applied. named heads its children with
// the instance's name, for a file of several.
func renderOne(ctx context.Context, w io.Writer, gs []*graph.Graph, inst *unstructured.Unstructured, ns string, sets []string, named bool) error {
	i := slices.IndexFunc(gs, func(g *graph.Graph) bool { return g.Instance.GVK.GroupKind() == inst.GroupVersionKind().GroupKind() })
	if i < 0 {
		return fmt.Errorf("instance %s is a %s, which none of the graphs serves", inst.GetName(), inst.GroupVersionKind().GroupKind())
	}
	switch {
	case ns == "":
	case inst.GetNamespace() == "":
		inst.SetNamespace(ns)
	case inst.GetNamespace() != ns:
		return fmt.Errorf("instance %s names namespace %s, not -n %s", inst.GetName(), inst.GetNamespace(), ns)
	}
	if err := setFields(inst, sets); err != nil {
		return err
	}
	out, err := plan.Render(ctx, gs[i], inst)
	if err != nil {
		return err
	}
	if named {
		if _, err := fmt.Fprintf(w, "# instance %s\n", inst.GetName()); err != nil {
			return err
		}
	}
	return writeRendered(w, out)
}

// setFields applies --set PATH=VALUE to u: PATH is dotted from the
// object's root (spec.x.y), VALUE is parsed as YAML.
func setFields(u *unstructured.Unstructured, sets []string) error {
	for _, s := range sets {
		path, raw, ok := strings.Cut(s, "=")
		if !ok || path == "" {
			return fmt.Errorf("--set %q: want PATH=VALUE", s)
		}
		fields := strings.Split(path, ".")
		if fields[0] != "spec" && fields[0] != "metadata" {
			return fmt.Errorf("--set %q: only spec and metadata fields can be set", s)
		}
		var v any
		if err := yaml.Unmarshal([]byte(raw), &v); err != nil {
			return fmt.Errorf("--set %q: value: %w", s, err)
		}
		if err := unstructured.SetNestedField(u.Object, memcluster.NormalizeNumbers(v), fields...); err != nil {
			return fmt.Errorf("--set %q: %w", s, err)
		}
	}
	return nil
}

func writeRendered(w io.Writer, r *plan.Rendered) error {
	b := &strings.Builder{}
	if err := r.WriteYAML(b); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func init() {
	rootCmd.AddCommand(newRenderCmd())
}
