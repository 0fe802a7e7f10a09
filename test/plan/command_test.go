package plan_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kroscope/kroscope/plan"
	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/graphs"
	"github.com/kroscope/kroscope/test/prereq"
)

// TestPlanCommand: `kroscope plan`'s exit status is Terraform's detailed
// one (0 no changes, 2 changes, 1 error), its last line the summary, -o
// json the same plan for CI, and -i plans an edited instance.
func TestPlanCommand(t *testing.T) {
	r := newRig(t)
	doc := func(greeting string) string {
		return graphDoc("PlanCmd", "name: string", graphs.ConfigMap("cm", "${schema.spec.name}", "greeting: "+greeting))
	}
	r.serve(r.build(doc("hello")), graphs.Instance("PlanCmd", "a", "name: a-cm"))
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	same, edited := write("same.yaml", doc("hello")), write("edited.yaml", doc("hi"))
	bad := write("bad.yaml", doc("${schema.spec.nope}"))
	inst := write("inst.yaml", graphs.Instance("PlanCmd", "a", "name: a-renamed"))
	kubeconfig := envtest.Kubeconfig(t, r.env.Config)
	run := func(args ...string) (string, int) {
		cmd := exec.Command(prereq.Kroscope(t), append([]string{"plan", "--kubeconfig", kubeconfig, "-n", r.ns}, args...)...)
		out, err := cmd.Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return string(out), ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	lastLine := func(out string) string {
		lines := strings.Split(strings.TrimSpace(out), "\n")
		return lines[len(lines)-1]
	}
	out, code := run(same)
	if code != 0 || lastLine(out) != "Plan: 0 to create, 0 to change, 0 to prune, across 1 instances; 0 would fail." {
		t.Errorf("unchanged graph: exit %d, output:\n%s", code, out)
	}
	out, code = run(edited)
	if code != 2 || lastLine(out) != "Plan: 0 to create, 1 to change, 0 to prune, across 1 instances; 0 would fail." {
		t.Errorf("edited graph: exit %d, output:\n%s", code, out)
	}
	out, code = run(edited, "-o", "json")
	var doc2 struct{ Summary plan.Summary }
	if err := json.Unmarshal([]byte(out), &doc2); err != nil || code != 2 || doc2.Summary.Change != 1 {
		t.Errorf("-o json: exit %d, %v, output:\n%s", code, err, out)
	}
	if out, code = run(bad); code != 1 {
		t.Errorf("an invalid graph is an error (exit 1), got exit %d:\n%s", code, out)
	}
	out, code = run(same, "-i", inst)
	if code != 2 || !strings.Contains(out, "+ ConfigMap "+r.ns+"/a-renamed") || !strings.Contains(out, "- ConfigMap "+r.ns+"/a-cm") {
		t.Errorf("-i with a renamed object: exit %d, output:\n%s", code, out)
	}
	// -i alone: the graph the cluster serves (a ResourceGraphDefinition).
	r.env.ApplyFiles(t, "", filepath.Join(prereq.KroData(t, "crds"), "kro.run_resourcegraphdefinitions.yaml"))
	r.env.ApplyFiles(t, "", edited)
	out, code = run("-i", inst)
	if code != 2 || !strings.Contains(out, "Graph plancmd (kind PlanCmd)") || !strings.Contains(out, `+ data.greeting: "hi"`) {
		t.Errorf("-i against the served graph: exit %d, output:\n%s", code, out)
	}
}
