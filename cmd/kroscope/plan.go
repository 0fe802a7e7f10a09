package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/plan"
	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/termtext"
)

// planChanges makes `kroscope plan` exit 2 when the plan has changes
// (Terraform's -detailed-exitcode).
type planChanges struct{ plan.Summary }

func (e *planChanges) Error() string {
	return "the plan has changes (exit status 2)"
}

func (e *planChanges) ExitCode() int { return plan.ExitCode(e.Summary, nil) }

// planFlags are plan's own flags.
type planFlags struct {
	instanceFiles []string
	selector      string
	output        string
	buildFlags
}

func newPlanCmd() *cobra.Command {
	var f planFlags
	cmd := &cobra.Command{
		Use:   "plan [GRAPH_FILE|DIR...] [-i INSTANCE_FILE]",
		Short: "Show what applying a graph or an edited instance would do to every instance, without writing",
		Long: `plan compares each ResourceGraphDefinition in the files with the one the
cluster serves and, for every existing instance of its kind (-n, --selector),
runs kroscope's reconciler once with every write sent as a server-side dry
run (dryRun=All, field manager kroscope). It lists per instance the objects
that would be created (+), changed (~, field by field), pruned (-) and what
would fail (!), and whether the instance CRD's schema change breaks stored
instances. With -i, only the instances in those files are planned, as
edited, against the graph in the files or, without graph files, the one the
cluster serves. Nothing is written. Exit status: 0 no changes, 2 changes,
1 error.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && len(f.instanceFiles) == 0 {
				return errors.New("plan needs graph files, -i instance files, or both")
			}
			if f.output != "text" && f.output != "json" {
				return fmt.Errorf("unknown output format %q: use text or json", f.output)
			}
			return runPlan(cmd, args, f)
		},
	}
	kubeFlags.AddFlags(cmd.Flags())
	cmd.Flags().StringArrayVarP(&f.instanceFiles, "instance", "i", nil, "instance file (YAML); only these instances are planned, as edited")
	cmd.Flags().StringVarP(&f.selector, "selector", "l", "", "label selector over the instances")
	cmd.Flags().StringVarP(&f.output, "output", "o", "text", "output format: text or json")
	f.add(cmd.Flags())
	return cmd
}

func runPlan(cmd *cobra.Command, args []string, f planFlags) error {
	conn, err := connectFlags()
	if err != nil {
		return err
	}
	if err := conn.reach(); err != nil {
		return err
	}
	cfg := rest.CopyConfig(conn.cfg)
	engine.Unthrottle(cfg) // as the engine: no client-side throttling
	set, err := client.NewSet(cfg)
	if err != nil {
		return err
	}
	opts := append(engine.GraphOptions(set, graph.NewCachedSchemaResolver(set.Discovery(), 0), f.celOmit), graph.WithLimits(f.limits))
	o := plan.Options{Set: set, Selector: f.selector, FileNamespace: conn.namespace}
	if fl := cmd.Flags().Lookup("namespace"); fl != nil && fl.Changed {
		o.Namespace = fl.Value.String()
	}
	if len(f.instanceFiles) > 0 {
		if o.Instances, err = plan.ReadObjects(f.instanceFiles, f.maxFileSize); err != nil {
			return err
		}
	}
	var gs []*graph.Graph
	if len(args) > 0 {
		if gs, err = loadAndBuild(cmd, args, termtext.Writer(cmd.ErrOrStderr()), f.buildFlags, typing{}, opts...); err != nil {
			// Wrapped: an invalid graph is an error (1), not validate's 2,
			// which a plan uses for "changes".
			return fmt.Errorf("%w", err)
		}
	} else if gs, err = servedGraphs(cmd.Context(), set, o.Instances, opts); err != nil {
		return err
	}
	if err := unplanned(o.Instances, gs); err != nil {
		return err
	}
	plans := make([]*plan.Plan, 0, len(gs))
	for _, g := range gs {
		p, err := plan.Graph(cmd.Context(), g, o)
		if err != nil {
			return fmt.Errorf("planning graph %s (%s): %w", g.Name, g.Source, err)
		}
		plans = append(plans, p)
	}
	if err := writePlan(termtext.Writer(cmd.OutOrStdout()), plans, f.output); err != nil {
		return err
	}
	if s := plan.Summarize(plans); s.Changes() {
		return &planChanges{s}
	}
	return nil
}

// unplanned refuses instances of a kind none of the graphs serves: left
// out silently, the plan would say "no changes" about a file it ignored.
func unplanned(insts []*unstructured.Unstructured, gs []*graph.Graph) error {
	var errs []error
	for _, u := range insts {
		if !slices.ContainsFunc(gs, func(g *graph.Graph) bool { return g.Instance.GVK.GroupKind() == u.GroupVersionKind().GroupKind() }) {
			errs = append(errs, fmt.Errorf("instance %s is a %s, which none of the graphs serves", u.GetName(), u.GroupVersionKind().GroupKind()))
		}
	}
	return errors.Join(errs...)
}

func writePlan(w io.Writer, plans []*plan.Plan, output string) error {
	if output == "json" {
		return plan.JSON(w, plans)
	}
	return plan.Text(w, plans)
}

// servedGraphs are the cluster's graphs whose kinds the instances are of,
// built as the engine builds them.
func servedGraphs(ctx context.Context, set *client.Set, insts []*unstructured.Unstructured, opts []graph.Option) ([]*graph.Graph, error) {
	list, err := set.Dynamic().Resource(graph.GroupVersionResource).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the cluster's ResourceGraphDefinitions: %w", err)
	}
	want := map[string]bool{}
	for _, u := range insts {
		want[u.GroupVersionKind().GroupKind().String()] = true
	}
	b := graph.NewBuilder(opts...)
	var out []*graph.Graph
	for i := range list.Items {
		rgd, err := graph.FromUnstructured(&list.Items[i])
		if err != nil {
			continue
		}
		g, _, err := b.Servable(rgd)
		if err != nil || !want[g.Instance.GVK.GroupKind().String()] {
			continue
		}
		out = append(out, g)
	}
	if len(out) == 0 {
		return nil, errors.New("the cluster serves no graph for the kinds of the instance files")
	}
	return out, nil
}

func init() {
	rootCmd.AddCommand(newPlanCmd())
}
