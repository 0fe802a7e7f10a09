package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/source"
	"github.com/kroscope/kroscope/reconciler/confine"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/graph/graphview"
	"github.com/kroscope/kroscope/termtext"
)

// invalidError reports definitions that failed to load or validate, or
// that none was found; the problems themselves have already been printed.
type invalidError struct {
	invalid, total, unreadable int
	none                       string // the paths, when no definition was found in them
}

func (e *invalidError) Error() string {
	if e.none != "" {
		return "no ResourceGraphDefinition found in " + e.none + " (documents of other kinds are skipped)"
	}
	s := fmt.Sprintf("%d of %d definition(s) invalid", e.invalid, e.total)
	if e.unreadable > 0 {
		s += fmt.Sprintf("; %d of the paths given could not be read", e.unreadable)
	}
	return s
}

// ExitCode is 2 for invalid definitions, so scripts can tell them from
// usage or I/O failures (1).
func (e *invalidError) ExitCode() int { return 2 }

// loadAndBuild loads every definition under paths and builds it, printing
// each problem to errOut. It returns the graphs that built and an
// *invalidError when anything was wrong. A graph whose estimated worst-case
// CEL cost exceeds limits for any instance is invalid too: it would fail at
// run time. One that exceeds them only for large inputs gets a warning.
func loadAndBuild(cmd *cobra.Command, paths []string, errOut io.Writer, b buildFlags, ty typing, opts ...graph.Option) ([]*graph.Graph, error) {
	gs, _, err := loadAndBuildDefinitions(cmd, paths, errOut, b, ty, opts...)
	return gs, err
}

// loadAndBuildDefinitions is loadAndBuild that also returns, beside each
// graph, the definition it was built from. With a cluster (ty.check), each
// graph's instance CRD is dry-run there too.
func loadAndBuildDefinitions(cmd *cobra.Command, paths []string, errOut io.Writer, bf buildFlags, ty typing, opts ...graph.Option) ([]*graph.Graph, []*graph.ResourceGraphDefinition, error) {
	loader := graph.Loader{MaxFileSize: bf.maxFileSize, Warn: func(path, why string) {
		fmt.Fprintf(errOut, "warning: %s: %s\n", path, why)
	}}
	rgds, loadErr := loader.Load(paths...)
	out := loadOutcome{paths: paths}
	if loadErr != nil {
		for _, e := range unjoin(loadErr) {
			fmt.Fprintln(errOut, e)
			if isReadError(e) {
				out.unreadable++
			} else {
				out.invalid++
			}
		}
	}
	b := graph.NewBuilder(append(append(ty.opts, opts...), graph.WithCELOmit(bf.celOmit), graph.WithLimits(bf.limits))...)
	var gs []*graph.Graph
	var built []*graph.ResourceGraphDefinition
	for _, rgd := range rgds {
		// The engine asks the same question before serving a graph.
		g, large, err := b.Servable(rgd)
		for _, w := range large {
			fmt.Fprintf(errOut, "warning: %s: %s\n", rgd.Source, w)
		}
		if err == nil && ty.check != nil {
			err = ty.check(cmd.Context(), g)
		}
		if err != nil {
			printInFile(errOut, rgd.Source, err)
			out.invalid++
			continue
		}
		gs = append(gs, g)
		built = append(built, rgd)
	}
	gs, built, clashes := sameKind(gs, built)
	for _, c := range clashes {
		fmt.Fprintln(errOut, c)
		out.invalid++
	}
	out.valid = len(gs)
	return gs, built, out.result()
}

// sameKind takes out the graphs whose instance kind another graph serves
// too, returning one error per such graph naming both files: at run time
// only one of them could be served.
func sameKind(gs []*graph.Graph, defs []*graph.ResourceGraphDefinition) ([]*graph.Graph, []*graph.ResourceGraphDefinition, []error) {
	first := map[string]*graph.Graph{}
	clash := map[*graph.Graph]*graph.Graph{}
	for _, g := range gs {
		gk := g.Instance.GVK.GroupKind().String()
		if f, ok := first[gk]; ok {
			clash[g] = f
			clash[f] = g
		} else {
			first[gk] = g
		}
	}
	var ok []*graph.Graph
	var okDefs []*graph.ResourceGraphDefinition
	var errs []error
	for i, g := range gs {
		other, bad := clash[g]
		if !bad {
			ok = append(ok, g)
			okDefs = append(okDefs, defs[i])
			continue
		}
		errs = append(errs, fmt.Errorf("%s: %s: kind %s is also served by graph %q (%s): give each graph its own kind",
			g.Source, g.Name, g.Instance.GVK.GroupKind(), other.Name, other.Source))
	}
	return ok, okDefs, errs
}

// printInFile prints each line of err prefixed with the file it is about,
// unless the line names it already: docs/graphs.md promises that every error
// names its file.
func printInFile(w io.Writer, source string, err error) {
	for _, line := range strings.Split(err.Error(), "\n") {
		if source != "" && !strings.Contains(line, source) {
			line = source + ": " + line
		}
		fmt.Fprintln(w, line)
	}
}

// unjoin splits an errors.Join tree one level (one entry per file or
// definition).
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func newGraphCmd() *cobra.Command {
	var output string
	var schemas *schemaFlags
	var bf buildFlags
	cmd := &cobra.Command{
		Use:   "graph FILE|DIR...",
		Short: "Show each ResourceGraphDefinition's kind, order and resource graph (no cluster needed)",
		Long: `graph loads ResourceGraphDefinitions from YAML files and directories
(recursively, *.yaml and *.yml), validates them and shows, for each one, the
instance kind, the topological order and a drawing of the dependency graph by
layers. -o json and -o dot print machine-readable forms. Invalid definitions
are reported with every problem found, and the exit status is 2.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch output {
			case "text", "json", "dot":
			default:
				return fmt.Errorf("unknown output format %q: use text, json or dot", output)
			}
			ty, err := schemas.typing(cmd)
			if err != nil {
				return err
			}
			gs, err := loadAndBuild(cmd, args, termtext.Writer(cmd.ErrOrStderr()), bf, ty)
			out := termtext.Writer(cmd.OutOrStdout())
			var werr error
			switch output {
			case "json":
				werr = graphview.JSON(out, gs)
			default:
				for i, g := range gs {
					if i > 0 {
						fmt.Fprintln(out)
					}
					if output == "dot" {
						werr = errors.Join(werr, graphview.Dot(out, g))
					} else {
						werr = errors.Join(werr, graphview.Text(out, g))
					}
				}
			}
			if err != nil {
				return err
			}
			return werr
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text, json or dot")
	schemas = addSchemaFlags(cmd.Flags())
	bf.add(cmd.Flags())
	return cmd
}

func newValidateCmd() *cobra.Command {
	var schemas *schemaFlags
	var bf buildFlags
	cmd := &cobra.Command{
		Use:   "validate FILE|DIR...",
		Short: "Check ResourceGraphDefinitions without a cluster",
		Long: `validate loads ResourceGraphDefinitions from YAML files and directories and
checks them as the reconciler would: schema, ids, templates, CEL expressions
(syntax, types, references), dependency cycles and, where cel-go can estimate
it, each expression's worst-case cost against --cel-cost-limit: over the limit
even for inputs of one element is an error, over it only for inputs of 1000
elements or characters (kro's own examples have such expressions) a warning.
Every problem is printed; the exit status is 2 when any definition is invalid.

What kroscope accepts and kro would reject is printed as a warning, naming
the file, resource id and field: kroscope's extensions
(spec.schema.validation, spec.defaultServiceAccounts, the SimpleSchema type
number, the CEL functions math.* and sets.*) and the kind ResourceGroup,
kro's name before v0.2. Warnings do not change the exit status.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			errOut, out := termtext.Writer(cmd.ErrOrStderr()), termtext.Writer(cmd.OutOrStdout())
			ty, err := schemas.typing(cmd)
			if err != nil {
				return err
			}
			gs, rgds, err := loadAndBuildDefinitions(cmd, args, errOut, bf, ty)
			for i, g := range gs {
				warnings := graph.KroWarnings(rgds[i], g)
				for _, w := range warnings {
					fmt.Fprintf(errOut, "warning: %s (kro would reject it)\n", w)
				}
				// What kroscope refuses to serve by default (docs/security.md).
				if err := engine.GraphRefusal(g, confine.Grant{AnyNamespace: source.Update{RGD: rgds[i]}.AnyNamespace()}); err != nil {
					fmt.Fprintf(errOut, "warning: %s: %v\n", g.Source, err)
				}
				note := ""
				if len(warnings) > 0 {
					note = fmt.Sprintf("  %d kro warning(s)", len(warnings))
				}
				fmt.Fprintf(out, "ok  %s  %s  (%d resource%s)  %s%s\n", g.Name, g.Instance.GVK.Kind, len(g.Resources), plurals(len(g.Resources)), g.Source, note)
			}
			return err
		},
	}
	schemas = addSchemaFlags(cmd.Flags())
	bf.add(cmd.Flags())
	return cmd
}

func init() {
	rootCmd.AddCommand(newGraphCmd(), newValidateCmd())
}

// plurals is the "s" a count other than one takes.
func plurals(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
