package main

import (
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// kubeConnFlags are kubectl's connection flags (--kubeconfig, --context,
// -n, --server, --token, ...), bound with client-go's clientcmd: the same
// loading rules and overrides cli-runtime's genericclioptions builds from
// them, without cli-runtime (whose package brings kustomize, 74 packages
// kroscope never runs). kubectl's --cache-dir is left out: kroscope keeps
// no discovery cache on disk.
type kubeConnFlags struct {
	rules     *clientcmd.ClientConfigLoadingRules
	overrides clientcmd.ConfigOverrides
	// all holds every flag, bound once: a command registers all of them
	// or only those it uses (the same *pflag.Flag, so the same value).
	all *pflag.FlagSet
}

func newKubeConnFlags() *kubeConnFlags {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	// kubectl's default (http://localhost:8080): connectionSource
	// recognises it, to say that no kubeconfig was found.
	rules.DefaultClientConfig = &clientcmd.DefaultClientConfig
	f := &kubeConnFlags{rules: rules, overrides: clientcmd.ConfigOverrides{ClusterDefaults: clientcmd.ClusterDefaults},
		all: pflag.NewFlagSet("kubectl", pflag.ContinueOnError)}
	f.all.StringVar(&f.rules.ExplicitPath, clientcmd.RecommendedConfigPathFlag, "", "Path to the kubeconfig file to use for CLI requests.")
	clientcmd.BindOverrideFlags(&f.overrides, f.all, clientcmd.RecommendedConfigOverrideFlags(""))
	return f
}

// AddFlags registers every flag on fs, spelled as kubectl spells them:
// for the commands that connect (the TUI, run, plan, rbac).
func (f *kubeConnFlags) AddFlags(fs *pflag.FlagSet) {
	fs.AddFlagSet(f.all)
}

// AddNamed registers only the flags named, for a command that needs no
// cluster but can use one: its help lists no flag it ignores.
func (f *kubeConnFlags) AddNamed(fs *pflag.FlagSet, names ...string) {
	for _, n := range names {
		fs.AddFlag(f.all.Lookup(n))
	}
}

// ToRawKubeConfigLoader is the client config the flags name now. It is
// made on each call: a deferred-loading config keeps what it loaded
// first, so a kept one would answer for the flags of an earlier command
// run in the same process (the commands' tests run many).
func (f *kubeConnFlags) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(f.rules, &f.overrides)
}

// ToRESTConfig is the REST config of that client config.
func (f *kubeConnFlags) ToRESTConfig() (*rest.Config, error) {
	return f.ToRawKubeConfigLoader().ClientConfig()
}

// Context is the --context flag's value ("" when not given).
func (f *kubeConnFlags) Context() string { return f.overrides.CurrentContext }
