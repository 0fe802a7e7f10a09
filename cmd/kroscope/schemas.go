package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/graph/builtinschemas"
)

// schemaFlags are --builtin-schemas and --kube-version, on the commands
// that build graphs without serving them (graph, validate, render): what
// templates are typed against.
type schemaFlags struct {
	builtin     bool
	kubeVersion string
}

// clusterFlags are the connection flags that name a cluster: given one,
// graph, validate and render type against that cluster's own API. They
// are the only connection flags those commands take (with the
// kubeconfig's credentials).
var clusterFlags = []string{"kubeconfig", "context", "server", "cluster"}

func addSchemaFlags(fs *pflag.FlagSet) *schemaFlags {
	f := &schemaFlags{}
	kubeFlags.AddNamed(fs, clusterFlags...)
	fs.BoolVar(&f.builtin, "builtin-schemas", true, "type-check templates of built-in kinds (ConfigMap, Deployment...) against the Kubernetes schemas kroscope embeds (--kube-version), as a cluster would; false leaves them untyped, as kinds served by CRDs are")
	fs.StringVar(&f.kubeVersion, "kube-version", builtinschemas.Newest(), "Kubernetes minor whose embedded schemas templates are typed against: "+strings.Join(builtinschemas.Versions(), ", ")+
		" (given --kubeconfig, --context, --server or --cluster, the cluster's own API is used instead, CRD kinds included, and validate dry-runs each instance CRD there)")
	return f
}

// typing is what templates are typed against, and with a cluster the
// check each built graph's instance CRD gets there.
type typing struct {
	opts []graph.Option
	// check is nil without a cluster.
	check func(context.Context, *graph.Graph) error
}

// typing resolves the flags: a cluster when a connection flag names one,
// else the embedded schemas of --kube-version. A minor kroscope does not
// embed is a usage error naming it.
func (f *schemaFlags) typing(cmd *cobra.Command) (typing, error) {
	if named := namedCluster(cmd); named != "" {
		if cmd.Flags().Changed("kube-version") {
			return typing{}, fmt.Errorf("--kube-version picks embedded schemas and --%s a cluster, whose own API is typed against: give one or the other", named)
		}
		if !f.builtin {
			return typing{}, nil
		}
		// A cluster named but not reached is an error (1), not every graph
		// invalid (2).
		conn, err := connectFlags()
		if err == nil {
			err = conn.reach()
		}
		if err != nil {
			return typing{}, err
		}
		r := sourcedResolver{graph.NewCachedSchemaResolver(conn.set.Discovery(), 0), "the API of " + conn.cfg.Host}
		return typing{opts: []graph.Option{graph.WithSchemaResolver(r)}, check: crdDryRun(conn.set)}, nil
	}
	s, err := builtinschemas.For(f.kubeVersion)
	if err != nil {
		return typing{}, fmt.Errorf("--kube-version %s: %w", f.kubeVersion, err)
	}
	if !f.builtin {
		return typing{}, nil
	}
	r := sourcedResolver{graph.NewClientSchemaResolver(s.Client(), 0), "Kubernetes " + s.Minor()}
	return typing{opts: []graph.Option{graph.WithSchemaResolver(r)}}, nil
}

// namedCluster is the first connection flag given on the command line.
func namedCluster(cmd *cobra.Command) string {
	for _, name := range clusterFlags {
		if cmd.Flags().Changed(name) {
			return name
		}
	}
	return ""
}

// sourcedResolver names whose schemas it serves, for the errors of a field
// that is not in them.
type sourcedResolver struct {
	graph.SchemaResolver
	source string
}

func (r sourcedResolver) SchemaSource() string { return r.source }

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// crdDryRun applies a graph's instance CRD with dryRun=All: the cluster's
// complete CRD validation, on its version, with nothing persisted (the
// offline checks in reconciler/graph/crd cover the schema, not what only
// the server knows).
func crdDryRun(set *client.Set) func(context.Context, *graph.Graph) error {
	return func(ctx context.Context, g *graph.Graph) error {
		if g.Instance.CRD == nil {
			return nil
		}
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(g.Instance.CRD)
		if err != nil {
			return err
		}
		u := &unstructured.Unstructured{Object: obj}
		unstructured.RemoveNestedField(u.Object, "status")
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		_, err = set.Dynamic().Resource(crdGVR).Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: "kroscope-validate", Force: true, DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return fmt.Errorf("instance CRD %s (server-side dry run): %w", u.GetName(), err)
		}
		return nil
	}
}
