package main

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/kroscope/kroscope/reconciler/graph/builtinschemas"
	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/graphs"
	"github.com/kroscope/kroscope/test/graphtest"
)

// bindMountGraph mounts a volume with bindMountOptions, a VolumeMount field
// Kubernetes 1.37 added.
var bindMountGraph = graphs.RGD("bindmount", "BindMount", "spec:\n  name: string",
	graphs.Template("deployment", "apps/v1", "Deployment", "name: ${schema.spec.name}", "spec:\n"+graphs.Indent(graphs.Workload("web", `volumes:
- name: data
  emptyDir: {}
containers:
- name: web
  image: nginx
  volumeMounts:
  - name: data
    mountPath: /data
    bindMountOptions: [nosuid, nodev]`), 2)))

// TestValidateKubeVersion: validate types templates against the newest
// embedded minor by default, so a 1.37 field is accepted; --kube-version
// 1.34 types against 1.34, where the field does not exist, and the error
// names the version; a minor kroscope does not embed is a usage error
// naming it and the ones it does.
func TestValidateKubeVersion(t *testing.T) {
	file := t.TempDir() + "/bindmount.yaml"
	writeFile(t, file, bindMountGraph)
	if builtinschemas.Newest() != "1.37" {
		t.Logf("newest embedded minor is %s", builtinschemas.Newest())
	}
	if out, stderr, err := runCmd(t, "validate", file); err != nil || !strings.Contains(out, "ok  bindmount") {
		t.Fatalf("default --kube-version (%s): err %v\nstdout %s\nstderr %s", builtinschemas.Newest(), err, out, stderr)
	}
	for _, minor := range []string{"1.34", "1.35", "1.36"} {
		_, stderr, err := runCmd(t, "validate", "--kube-version", minor, file)
		var ec interface{ ExitCode() int }
		if !errors.As(err, &ec) || ec.ExitCode() != 2 {
			t.Fatalf("--kube-version %s: err = %v, want exit code 2; stderr:\n%s", minor, err, stderr)
		}
		want := `Deployment has no field "bindMountOptions" in Kubernetes ` + minor
		if !strings.Contains(stderr, want) {
			t.Errorf("--kube-version %s: stderr lacks %q:\n%s", minor, want, stderr)
		}
	}
	_, _, err := runCmd(t, "validate", "--kube-version", "1.20", file)
	if err == nil || !strings.Contains(err.Error(), "--kube-version 1.20: Kubernetes 1.20: kroscope embeds the schemas of "+strings.Join(builtinschemas.Versions(), ", ")) {
		t.Errorf("--kube-version 1.20: err = %v", err)
	}
}

// TestRenderKubeVersion: render takes --kube-version too.
func TestRenderKubeVersion(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir+"/bindmount.yaml", bindMountGraph)
	writeFile(t, dir+"/instance.yaml", "apiVersion: kro.run/v1alpha1\nkind: BindMount\nmetadata:\n  name: one\n  namespace: default\nspec:\n  name: one\n")
	if out, stderr, err := runCmd(t, "render", dir+"/bindmount.yaml", "-i", dir+"/instance.yaml"); err != nil || !strings.Contains(out, "bindMountOptions") {
		t.Fatalf("render: err %v\nstdout %s\nstderr %s", err, out, stderr)
	}
	_, stderr, err := runCmd(t, "render", "--kube-version", "1.34", dir+"/bindmount.yaml", "-i", dir+"/instance.yaml")
	if err == nil || !strings.Contains(stderr+err.Error(), `Deployment has no field "bindMountOptions" in Kubernetes 1.34`) {
		t.Errorf("render --kube-version 1.34: err %v, stderr %s", err, stderr)
	}
}

// TestValidateAgainstCluster: given --kubeconfig, validate types templates
// against that cluster's own API (the test API server's minor) and dry-runs
// each instance CRD there; --kube-version with it is a usage error.
func TestValidateAgainstCluster(t *testing.T) {
	env := envtest.Start(t)
	kubeconfig := envtest.Kubeconfig(t, env.Config)
	file := t.TempDir() + "/bindmount.yaml"
	writeFile(t, file, bindMountGraph)
	out, stderr, err := runCmd(t, "validate", "--kubeconfig", kubeconfig, file)
	v, err2 := env.Kubernetes().Discovery().ServerVersion()
	if err2 != nil {
		t.Fatal(err2)
	}
	served, _ := strconv.Atoi(strings.TrimSuffix(v.Minor, "+"))
	has := served >= 37 // bindMountOptions is in 1.37's VolumeMount
	switch {
	case has && (err != nil || !strings.Contains(out, "ok  bindmount")):
		t.Errorf("1.%d server: err %v\nstdout %s\nstderr %s", served, err, out, stderr)
	case !has && (err == nil || !strings.Contains(stderr, `Deployment has no field "bindMountOptions" in the API of `)):
		t.Errorf("1.%d server: err %v\nstderr %s", served, err, stderr)
	}
	// A CRD only the server can refuse: BindMount's CRD is served at
	// v1alpha1 and instances are stored at it, so a graph that moves the
	// kind to v1alpha2 would drop a stored version. The offline checks
	// cannot know; the dry run reports it, as the server words it.
	plain := strings.Replace(bindMountGraph, "                bindMountOptions: [nosuid, nodev]\n", "", 1)
	g := graphtest.Build(t, plain, "bindmount.yaml")
	env.InstallCRDs(t, g.Instance.CRD)
	writeFile(t, file, strings.Replace(plain, "    apiVersion: v1alpha1\n", "    apiVersion: v1alpha2\n", 1))
	_, stderr, err = runCmd(t, "validate", "--kubeconfig", kubeconfig, file)
	if err == nil || !strings.Contains(stderr, "instance CRD bindmounts.kro.run (server-side dry run)") || !strings.Contains(stderr, "storedVersions") {
		t.Errorf("CRD refused by the server: err %v\nstderr %s", err, stderr)
	}
	_, _, err = runCmd(t, "validate", "--kubeconfig", kubeconfig, "--kube-version", "1.35", file)
	if err == nil || !strings.Contains(err.Error(), "--kube-version picks embedded schemas and --kubeconfig a cluster") {
		t.Errorf("--kube-version with --kubeconfig: err = %v", err)
	}
}
