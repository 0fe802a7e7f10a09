package main

import (
	"os"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// kubeconfigFacts are what client-go's loading rules did, gathered by
// loadedKubeconfig: the files they looked at, whether the result is only
// their built-in default (http://localhost:8080, which kubectl falls back to
// when nothing is configured), and the context chosen.
type kubeconfigFacts struct {
	Files    []string // client-go's loading precedence, in order
	Missing  []bool   // Files[i] does not exist
	Explicit bool     // Files is --kubeconfig
	Env      *string  // $KUBECONFIG when set (even to "")
	Default  bool     // the config is the loading rules' default: nothing was loaded
	Context  string
}

// noKubeconfigHint is what a first run without a cluster should try.
const noKubeconfigHint = "point --kubeconfig or $KUBECONFIG at a kubeconfig, or try `kroscope demo`, which needs no cluster"

// noKubeconfigError says that the loading rules found no cluster to
// connect to, and where they looked.
type noKubeconfigError struct{ looked string }

func (e *noKubeconfigError) Error() string {
	return "no kubeconfig found: " + e.looked + "; " + noKubeconfigHint
}

// connectionSource says where the connection comes from, for the messages
// about it ("kubeconfig /home/me/.kube/config, context kind-kind"), or why
// there is none: no kubeconfig was found, so client-go would dial its
// default http://localhost:8080, which is never what a first run wants.
func connectionSource(f kubeconfigFacts) (string, error) {
	if f.Context == InClusterContext {
		return "the Pod's ServiceAccount (in-cluster)", nil
	}
	var found []string
	for i, p := range f.Files {
		if !f.Missing[i] {
			found = append(found, p)
		}
	}
	if f.Default {
		return "", &noKubeconfigError{lookedAt(f, found)}
	}
	src := "kubeconfig " + strings.Join(found, ", ")
	if len(found) == 0 {
		src = "the connection flags (no kubeconfig file)"
	}
	if f.Context != "" {
		src += ", context " + f.Context
	}
	return src, nil
}

// lookedAt says which files the loading rules read, for the error when
// none gave a cluster.
func lookedAt(f kubeconfigFacts, found []string) string {
	if len(found) > 0 {
		return strings.Join(found, ", ") + " holds no cluster and no current context"
	}
	switch {
	case f.Explicit:
		return "--kubeconfig " + strings.Join(f.Files, ", ") + " does not exist"
	case f.Env != nil && *f.Env == "":
		return "$KUBECONFIG is empty and " + strings.Join(f.Files, ", ") + " does not exist"
	case f.Env != nil:
		return "$KUBECONFIG names " + strings.Join(f.Files, ", ") + ", which does not exist"
	}
	return strings.Join(f.Files, ", ") + " does not exist and $KUBECONFIG is not set"
}

// loadedKubeconfig gathers kubeconfigFacts from the loading rules the
// kubectl flags built and the config they gave.
func loadedKubeconfig(loader clientcmd.ClientConfig, cfg *rest.Config, context string) kubeconfigFacts {
	f := kubeconfigFacts{Context: context}
	if v, ok := os.LookupEnv(clientcmd.RecommendedConfigPathEnvVar); ok {
		f.Env = &v
	}
	rules, ok := loader.ConfigAccess().(*clientcmd.ClientConfigLoadingRules)
	if !ok {
		return f
	}
	f.Files = rules.GetLoadingPrecedence()
	f.Explicit = rules.IsExplicitFile()
	for _, p := range f.Files {
		_, err := os.Stat(p)
		f.Missing = append(f.Missing, err != nil)
	}
	f.Default = rules.IsDefaultConfig(cfg)
	return f
}
