// Command devcluster runs a real kube-apiserver and etcd (the ones the tests
// use, built by `make assets`) with kro's CRDs installed, and writes a
// kubeconfig for it: a cluster set up as users of kro have it, for trying
// kroscope by hand (`make dev-cluster`). It runs until interrupted.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"k8s.io/client-go/rest"
	ctrlenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/krocrds"
)

func main() {
	// A flag set of its own: controller-runtime registers --kubeconfig on
	// the global one.
	fs := flag.NewFlagSet("devcluster", flag.ExitOnError)
	out := fs.String("kubeconfig", "bin/dev-cluster.kubeconfig", "where to write the kubeconfig for the cluster")
	crds := fs.String("kro-crds", krocrds.Dir(), "folder of kro's CRDs to install (empty: none)")
	_ = fs.Parse(os.Args[1:])
	if err := run(*out, *crds); err != nil {
		fmt.Fprintln(os.Stderr, "devcluster:", err)
		os.Exit(1)
	}
}

func run(out, crds string) error {
	env, err := envtest.StartStandalone()
	if err != nil {
		return err
	}
	defer func() { _ = env.Environment.Stop() }()
	if crds != "" {
		installed, err := ctrlenvtest.InstallCRDs(env.Config, ctrlenvtest.CRDInstallOptions{Paths: []string{crds}, ErrorIfPathMissing: true})
		if err != nil {
			return fmt.Errorf("installing kro's CRDs from %s: %w", crds, err)
		}
		for _, c := range installed {
			fmt.Println("installed CRD", c.Name)
		}
	} else {
		fmt.Println("kro's CRDs not found (make assets puts them in bin/kro/<version>/crds; or --kro-crds): none installed")
	}
	if err := writeKubeconfig(out, env.Config); err != nil {
		return err
	}
	abs, _ := filepath.Abs(out)
	fmt.Printf("API server %s is up. In another terminal:\n\n  export KUBECONFIG=%s\n\nctrl-C stops it (its data is gone then).\n", env.Config.Host, abs)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	fmt.Println("stopping")
	return nil
}

// writeKubeconfig writes an admin kubeconfig.
func writeKubeconfig(path string, cfg *rest.Config) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return envtest.WriteKubeconfig(cfg, path)
}
