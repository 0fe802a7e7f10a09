package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/prereq"
)

// `kroscope plan -i` on an instance file that names no namespace plans it
// in the kubeconfig context's namespace, as kubectl apply -f would place
// it (#38: without -n it was planned nowhere, "a new namespaced instance
// needs metadata.namespace", reported as exit status 2, "has changes").
// The repository's own examples/webapp/instances.yaml names none.
func TestPlanInstanceFileInTheContextNamespace(t *testing.T) {
	env := envtest.Start(t)
	ns := env.Namespace(t)
	kubeconfig := envtest.Kubeconfig(t, env.Config)
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Contexts[cfg.CurrentContext].Namespace = ns
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	ex := filepath.Join(prereq.RepoRoot(), "examples", "webapp")
	out, stderr, err := runCmd(t, "plan", "--kubeconfig", kubeconfig, filepath.Join(ex, "rgd.yaml"), "-i", filepath.Join(ex, "instances.yaml"))
	var changes *planChanges
	if !errors.As(err, &changes) {
		t.Fatalf("err %v, want the plan's changes (exit status 2)\nstdout:\n%s\nstderr:\n%s", err, out, stderr)
	}
	for _, want := range []string{"instance " + ns + "/shop:", "instance " + ns + "/blog:", "+ ConfigMap " + ns + "/shop-config (config)"} {
		if !strings.Contains(out, want) {
			t.Errorf("the plan lacks %q:\n%s", want, out)
		}
	}
	if changes.Fail != 0 {
		t.Errorf("%d would fail, want none:\n%s", changes.Fail, out)
	}
	_, _, err = runCmd(t, "plan", "--kubeconfig", kubeconfig, filepath.Join(prereq.RepoRoot(), "examples", "fanout", "rgd.yaml"), "-i", filepath.Join(ex, "instances.yaml"))
	if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "none of the graphs serves") {
		t.Errorf("instances no graph serves: %v, want exit status 1 saying so", err)
	}
}
