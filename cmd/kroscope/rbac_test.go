package main

import (
	"strings"
	"testing"

	"github.com/kroscope/kroscope/test/graphs"
)

// TestRBACCommand: `kroscope rbac FILE` prints each graph's ClusterRole
// (and, with --bind, its binding); a graph kroscope refuses to serve is
// named on stderr, with no rules printed for it.
func TestRBACCommand(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir+"/ok.yaml", graphs.RGD("okgraph", "OkGraph", "",
		graphs.Template("job", "batch/v1", "Job", "name: ${schema.metadata.name}", "spec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: c\n        image: busybox")))
	writeFile(t, dir+"/escalate.yaml", graphs.RGD("escalate", "Escalate", "",
		graphs.Template("role", "rbac.authorization.k8s.io/v1", "Role", "name: ${schema.metadata.name}", "rules: []")))
	out, stderr, err := runCmd(t, "rbac", "--kubeconfig", "/dev/null", "--bind", "kroscope-system/kroscope", dir)
	if err != nil {
		t.Fatalf("rbac: %v\n%s", err, stderr)
	}
	for _, want := range []string{"name: kroscope:graph:okgraph", "kroscope.dev/aggregate-to-graphs: \"true\"", "- jobs", "- okgraphs/status",
		"resourceNames:\n  - okgraphs.kro.run", "kind: ClusterRoleBinding", "namespace: kroscope-system"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "escalate") {
		t.Errorf("rules printed for a graph kroscope refuses:\n%s", out)
	}
	if !strings.Contains(stderr, "graph escalate") || !strings.Contains(stderr, "RBAC object") {
		t.Errorf("stderr does not name the refused graph:\n%s", stderr)
	}
	// With the flag that allows the kind, its rules are printed too.
	out, _, err = runCmd(t, "rbac", "--kubeconfig", "/dev/null", "--allow-child-kind", "Role.rbac.authorization.k8s.io", dir+"/escalate.yaml")
	if err != nil || !strings.Contains(out, "- roles") {
		t.Errorf("with --allow-child-kind: %v\n%s", err, out)
	}
	if _, _, err := runCmd(t, "rbac", "--kubeconfig", "/dev/null", "--bind", "nope", dir); err == nil {
		t.Error("--bind nope was accepted")
	}
}
