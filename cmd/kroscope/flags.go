package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/krodetect"
	"github.com/kroscope/kroscope/engine/lease"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/confine"
	"github.com/kroscope/kroscope/reconciler/graph"
)

// addEngineFlags registers the engine's flags (shared by the TUI, run and
// demo commands) on fs, writing into o.
func addEngineFlags(fs *pflag.FlagSet, o *engine.Options) {
	fs.StringSliceVar(&o.RGDPaths, "rgd", nil, "ResourceGraphDefinition files or folders to serve (repeatable; folders are read recursively)")
	addMaxFileSizeFlag(fs, &o.MaxFileSize)
	fs.BoolVar(&o.WatchClusterRGDs, "cluster-rgds", true, "also serve the cluster's kro.run/v1alpha1 ResourceGraphDefinitions (when kro's CRD is installed)")
	fs.IntVar(&o.Workers, "workers", 0, fmt.Sprintf("parallel reconciles (0: %d per CPU)", engine.WorkersPerCPU))
	fs.DurationVar(&o.RequeueInterval, "requeue-interval", engine.DefaultRequeueInterval, "how long a waiting instance sleeps before it is checked again (children are watched, so this is a safety net)")
	fs.BoolVar(&o.Observe, "observe", false, "read-only: never write to the cluster; states are computed from what is observed")
	fs.BoolVar(&o.ForceCRD, "force-crd", false, "overwrite instance CRDs that neither kroscope nor kro created, and apply schema changes that break stored instances")
	addCELOmitFlag(fs, &o.CELOmit)
	addCELLimitFlags(fs, &o.CELLimits)
	fs.StringVar(&o.LeaseNamespace, "lease-namespace", lease.DefaultNamespace, "namespace of the Lease that elects the one kroscope that writes")
	fs.StringVar(&o.LeaseName, "lease-name", lease.DefaultName, "name of that Lease")
	fs.StringVar(&o.Identity, "identity", "", "this process's identity in the Lease (default: hostname and a random suffix)")
	fs.DurationVar(&o.LeaseDuration, "lease-duration", lease.DefaultLeaseDuration, "how long a holder that went away keeps the Lease")
	fs.BoolVar(&o.TakeOver, "take-over", false, "reconcile although kro's controller was seen on this cluster before kroscope started and is not proven gone (a kro that was stopped); a kro seen while kroscope runs (its lease, Deployment or new writes) is still not fought")
	fs.DurationVar(&o.KroSilence, "kro-silence", krodetect.DefaultSilence, "how long kro must leave a change to a cluster graph unanswered for that to prove it gone (negative: never)")
	fs.DurationVar(&o.KroPollInterval, "kro-poll-interval", engine.DefaultKroPollInterval, "how often kro's Lease and Deployment are checked (negative: never look for kro)")
	fs.BoolVar(&o.AllowAdoption, "allow-adoption", false, "adopt existing objects that carry no ownership labels")
	fs.Var(&childKinds{&o.AllowChildKinds}, "allow-child-kind", "let graphs create this sensitive kind (RBAC, CRDs, admission webhooks, APIServices... are refused by default), as Kind.group, e.g. ClusterRole.rbac.authorization.k8s.io (repeatable; docs/security.md)")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", "", "serve Prometheus metrics at this address, e.g. 127.0.0.1:8078 (default off); plain HTTP to whoever reaches it, unless --metrics-secure")
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", false, "serve metrics over HTTPS, only to clients whose bearer token the API server authenticates and authorizes for GET /metrics (docs/security.md)")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", "", "serve /healthz (engine alive, not wedged) and /readyz (watches synced, graphs loaded; a replica not holding the Lease is ready too) at this address, e.g. :8081 (default off)")
	fs.StringVar(&o.ReconcileConfig.DeletionPolicy, "deletion-policy", reconciler.DeletionPolicyDelete, "what happens to children when an instance is deleted: Delete or Orphan")
	fs.DurationVar(&o.ShutdownGrace, "shutdown-grace", engine.ShutdownGrace, "after ctrl-C, SIGTERM or --timeout: how long reconciles (cancelled at once) and graphs get to stop before kroscope exits anyway")
	fs.IntVar(&o.ReconcileConfig.MaxNestingDepth, reconciler.MaxNestingDepthFlag, reconciler.DefaultMaxNestingDepth, "refuse (FAILED) an instance with more instances than this above it: graphs that create instances of each other")
	fs.DurationVar(&o.ReconcileConfig.DeletionGraceTimeDuration, "deletion-grace-time", 0, "report a child that is still there this long after its deletion (0: the reconciler's default)")
}

// buildFlags are the flags of every command that builds graphs from
// files (graph, validate, render, plan, rbac): how big a file may be, how
// CEL is bounded, whether omit() is allowed.
type buildFlags struct {
	maxFileSize int64
	limits      graph.Limits
	celOmit     bool
}

// add registers them on fs.
func (b *buildFlags) add(fs *pflag.FlagSet) {
	addMaxFileSizeFlag(fs, &b.maxFileSize)
	addCELLimitFlags(fs, &b.limits)
	addCELOmitFlag(fs, &b.celOmit)
}

// addCELOmitFlag registers --enable-cel-omit, kro's CELOmitFunction
// feature gate, on every command that builds graphs.
func addCELOmitFlag(fs *pflag.FlagSet, v *bool) {
	fs.BoolVar(v, graph.OmitFlag, false, "allow omit() in resource templates (alpha in kro: its "+graph.OmitFeatureGate+" feature gate)")
}

// addMaxFileSizeFlag registers --max-file-size: definition files are read
// whole, so their size is bounded.
func addMaxFileSizeFlag(fs *pflag.FlagSet, v *int64) {
	fs.Int64Var(v, graph.MaxFileSizeFlag, graph.DefaultMaxFileSize, "largest ResourceGraphDefinition file read, in bytes (FIFOs, devices and sockets are skipped)")
}

// addCELLimitFlags registers --cel-cost-limit and --cel-timeout on every
// command that builds graphs: graphs and instances are untrusted, so every
// evaluation is bounded.
func addCELLimitFlags(fs *pflag.FlagSet, l *graph.Limits) {
	*l = graph.DefaultLimits
	fs.Uint64Var(&l.Cost, graph.CostLimitFlag, graph.DefaultLimits.Cost, "CEL cost limit of one evaluation of one expression (list elements and characters touched); an expression that exceeds it FAILs its resource, and validate rejects graphs whose estimated worst case exceeds it")
	fs.DurationVar(&l.Timeout, graph.TimeoutFlag, graph.DefaultLimits.Timeout, "wall-clock limit of one evaluation of one expression")
}

// checkRGDPaths refuses --rgd paths that do not exist or cannot be read,
// before anything connects: a typo in a path is a usage error, to be named
// at once rather than found later among the graphs' states.
func checkRGDPaths(paths []string) error {
	var errs []error
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			errs = append(errs, fmt.Errorf("--rgd %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// connection is the cluster the kubectl flags name.
type connection struct {
	cfg     *rest.Config
	set     *client.Set
	cluster state.Cluster // context, server and source; no namespace
	// namespace is -n, else the context's, else "default": where kubectl
	// puts an object that names none.
	namespace string
}

// connectFlags resolves the kubectl flags: the one decision every command
// that needs a cluster makes (the TUI, run, plan, and validate, graph,
// render and rbac when given one). No kubeconfig is an error saying where
// it looked, never a dial to client-go's default http://localhost:8080.
func connectFlags() (*connection, error) {
	cfg, err := kubeFlags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w (or try `kroscope demo`, which needs no cluster)", err)
	}
	loader := kubeFlags.ToRawKubeConfigLoader()
	raw, _ := loader.RawConfig()
	ctxName := clusterContext(raw, kubeFlags.Context(), cfg.Host, os.Getenv)
	source, err := connectionSource(loadedKubeconfig(loader, cfg, ctxName))
	if err != nil {
		return nil, err
	}
	set, err := client.NewSet(cfg)
	if err != nil {
		return nil, err
	}
	ns, _, err := loader.Namespace()
	if err != nil || ns == "" {
		ns = metav1.NamespaceDefault
	}
	return &connection{cfg: cfg, set: set, namespace: ns,
		cluster: state.Cluster{Context: ctxName, Server: cfg.Host, Source: source}}, nil
}

// reach asks the API server for its version: a command that cannot reach
// it stops with the TUI's and run's words (engine.Unreachable).
func (c *connection) reach() error {
	if _, err := c.set.Discovery().ServerVersion(); err != nil {
		title, hint := engine.Unreachable(err, c.cluster)
		return fmt.Errorf("%s: %w (%s)", title, err, hint)
	}
	return nil
}

// connectEngine fills o's connection from the kubectl flags: the client
// set, what the status bar shows, and the namespace when -n was given
// (otherwise instances are watched in all namespaces).
func connectEngine(cmd *cobra.Command, o *engine.Options) error {
	c, err := connectFlags()
	if err != nil {
		return err
	}
	o.ClientSet = c.set
	if f := cmd.Flags().Lookup("namespace"); f != nil && f.Changed {
		o.Namespace = f.Value.String()
	}
	o.Cluster = c.cluster
	o.Cluster.Namespace = o.Namespace
	return nil
}

// childKinds is --allow-child-kind: Kind.group values, parsed as given.
type childKinds struct{ to *[]schema.GroupKind }

func (c *childKinds) String() string {
	var out []string
	for _, gk := range *c.to {
		out = append(out, confine.FlagValue(gk))
	}
	return strings.Join(out, ",")
}

func (c *childKinds) Set(v string) error {
	gks, err := confine.ParseKinds(strings.Split(v, ","))
	if err != nil {
		return err
	}
	*c.to = append(*c.to, gks...)
	return nil
}

func (c *childKinds) Type() string { return "Kind.group" }
