package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/rights"
	"github.com/kroscope/kroscope/engine/source"
	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/confine"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/termtext"
)

// rbacOptions are `kroscope rbac`'s flags.
type rbacOptions struct {
	bind  string             // NAMESPACE/NAME of a ServiceAccount to bind each role to
	kinds []schema.GroupKind // --allow-child-kind
	buildFlags
}

func newRBACCmd() *cobra.Command {
	var o rbacOptions
	cmd := &cobra.Command{
		Use:   "rbac [FILE|DIR...]",
		Short: "Print the RBAC rules kroscope's ServiceAccount needs to serve graphs",
		Long: `rbac prints, for each graph, a ClusterRole with exactly the rules kroscope
needs to serve it beyond deploy/'s own rights: its instances and their status,
a patch of its instance CRD (by name), and every kind its resources create
(get, list, watch, create, patch, delete) or read (get, list, watch).

Each ClusterRole is labelled ` + rights.AggregateLabel + `: "true", so on a
cluster with ClusterRole aggregation (every kube-controller-manager) its rules
join deploy/'s kroscope:graphs, which is bound to kroscope's ServiceAccount:

  kroscope rbac graphs/ | kubectl apply -f -

--bind NAMESPACE/NAME also prints a ClusterRoleBinding of each role to that
ServiceAccount (without aggregation, or to grant one graph only).

With no FILE, the cluster's ResourceGraphDefinitions are read (the current
kubeconfig context). Kinds are resolved by the cluster's discovery when a
cluster is reachable, otherwise by convention (the plural of the kind). A
graph kroscope would refuse to serve (a sensitive kind, a cluster-scoped child
of namespaced instances: docs/security.md) is named on stderr and left out.`,
		Example: `  kroscope rbac examples/
  kroscope rbac --bind kroscope-system/kroscope
  kroscope rbac graphs/webapp.yaml | kubectl apply -f -`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRBAC(cmd, args, o)
		},
	}
	fs := cmd.Flags()
	kubeFlags.AddFlags(fs)
	fs.StringVar(&o.bind, "bind", "", "also bind each ClusterRole to this ServiceAccount, NAMESPACE/NAME (e.g. kroscope-system/kroscope)")
	fs.Var(&childKinds{&o.kinds}, "allow-child-kind", "print rules for graphs that create this sensitive kind too, as `kroscope run --allow-child-kind` would serve them (Kind.group, repeatable)")
	o.add(fs)
	return cmd
}

func runRBAC(cmd *cobra.Command, args []string, o rbacOptions) error {
	saNS, saName, hasBind := strings.Cut(o.bind, "/")
	if o.bind != "" && (!hasBind || saNS == "" || saName == "") {
		return fmt.Errorf("--bind %q: want NAMESPACE/NAME", o.bind)
	}
	errOut := termtext.Writer(cmd.ErrOrStderr())
	opts := []graph.Option{graph.WithCELOmit(o.celOmit)}
	set := rbacClients(cmd, len(args) == 0)
	if set != nil {
		opts = append(opts, engine.GraphOptions(set, graph.NewCachedSchemaResolver(set.Discovery(), 0), o.celOmit)...)
	}
	var gs []*graph.Graph
	var grants []bool
	var buildErr error
	if len(args) > 0 {
		var rgds []*graph.ResourceGraphDefinition
		gs, rgds, buildErr = loadAndBuildDefinitions(cmd, args, errOut, o.buildFlags, typing{}, opts...)
		for _, rgd := range rgds {
			grants = append(grants, source.Update{RGD: rgd}.AnyNamespace())
		}
	} else {
		if set == nil {
			return fmt.Errorf("no FILE given and no cluster reachable: name graph files, or a kubeconfig context")
		}
		var err error
		gs, grants, err = clusterGraphs(cmd.Context(), set, errOut, o, opts)
		if err != nil {
			return err
		}
	}
	return printRoles(termtext.Writer(cmd.OutOrStdout()), errOut, gs, grants, o.kinds, saNS, saName, buildErr)
}

// rbacClients connects to the cluster of the kubeconfig, nil when there is
// none (files are then resolved by convention); required says the cluster
// is where the graphs come from.
func rbacClients(cmd *cobra.Command, required bool) *client.Set {
	conn, err := connectFlags()
	if err == nil {
		err = conn.reach()
	}
	if err != nil {
		if required {
			fmt.Fprintln(cmd.ErrOrStderr(), err)
		}
		return nil
	}
	return conn.set
}

// clusterGraphs builds the cluster's graphs as the engine would serve them.
func clusterGraphs(ctx context.Context, set *client.Set, errOut io.Writer, o rbacOptions, opts []graph.Option) ([]*graph.Graph, []bool, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	list, err := set.Dynamic().Resource(graph.GroupVersionResource).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("listing the cluster's ResourceGraphDefinitions: %w", err)
	}
	b := graph.NewBuilder(append(opts, graph.WithLimits(o.limits))...)
	var gs []*graph.Graph
	var grants []bool
	for i := range list.Items {
		u := &list.Items[i]
		rgd, err := graph.FromUnstructured(u)
		if err == nil {
			rgd.Source = source.ClusterSource
			var g *graph.Graph
			if g, _, err = b.Servable(rgd); err == nil {
				gs = append(gs, g)
				grants = append(grants, source.Update{Object: u}.AnyNamespace())
				continue
			}
		}
		fmt.Fprintf(errOut, "graph %s: not served, no rules printed: %v\n", u.GetName(), err)
	}
	return gs, grants, nil
}

// printRoles prints each servable graph's ClusterRole (and binding), as
// one YAML stream; a graph kroscope refuses is named on errOut instead.
func printRoles(out, errOut io.Writer, gs []*graph.Graph, anyNamespace []bool, kinds []schema.GroupKind, saNS, saName string, buildErr error) error {
	n := 0
	for i, g := range gs {
		if err := engine.GraphRefusal(g, confine.Grant{AnyNamespace: anyNamespace[i], Kinds: kinds}); err != nil {
			fmt.Fprintf(errOut, "graph %s (%s): %v: no rules printed\n", g.Name, g.Source, err)
			continue
		}
		docs := []any{rights.ClusterRole(g)}
		if saNS != "" {
			docs = append(docs, rights.ClusterRoleBinding(g.Name, saNS, saName))
		}
		for _, d := range docs {
			b, err := yaml.Marshal(d)
			if err != nil {
				return err
			}
			if n > 0 {
				fmt.Fprintln(out, "---")
			}
			fmt.Fprintf(out, "# graph %s (%s)\n%s", g.Name, g.Source, dropCreationTimestamp(b))
			n++
		}
	}
	return buildErr
}

// dropCreationTimestamp removes the `creationTimestamp: null` lines
// metav1.ObjectMeta marshals, which kubectl apply does not need.
func dropCreationTimestamp(b []byte) string {
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) != "creationTimestamp: null" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

func init() {
	rootCmd.AddCommand(newRBACCmd())
}
