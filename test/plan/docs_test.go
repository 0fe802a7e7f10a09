package plan_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/prereq"
)

// TestPlanWebappAsDocumented: the plan docs/plan.md and the README show is
// this one: examples/webapp and its two instances, made ready (the test
// plays the Deployment and Ingress controllers), planned with
// testdata/webapp-v2.yaml by the built command. The output, with the test's
// namespace written team-a, is testdata/webapp-v2.plan, and both pages quote
// it whole (KROSCOPE_UPDATE_PLAN=1 rewrites the file).
func TestPlanWebappAsDocumented(t *testing.T) {
	r := newRig(t)
	root := prereq.RepoRoot()
	src, err := os.ReadFile(filepath.Join(root, "examples", "webapp", "rgd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	g := r.build(string(src))
	insts, err := os.ReadFile(filepath.Join(root, "examples", "webapp", "instances.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r.serve(g)
	for _, doc := range strings.Split(string(insts), "\n---\n") {
		u := r.object(doc)
		if _, err := r.set.Dynamic().Resource(g.Instance.GVR).Namespace(r.ns).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		r.makeReady(g, u.GetName())
	}
	cmd := exec.Command(prereq.Kroscope(t), "plan", "--kubeconfig", envtest.Kubeconfig(t, r.env.Config), "-n", r.ns,
		filepath.Join("testdata", "webapp-v2.yaml"))
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Fatalf("plan: %v (want exit 2), output:\n%s", err, out)
	}
	got := strings.ReplaceAll(string(out), r.ns, "team-a")
	golden := filepath.Join("testdata", "webapp-v2.plan")
	if os.Getenv("KROSCOPE_UPDATE_PLAN") != "" {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("the plan differs from %s:\n--- got\n%s--- want\n%s", golden, got, want)
	}
	for _, page := range []string{"README.md", filepath.Join("docs", "plan.md")} {
		b, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), got) {
			t.Errorf("%s does not quote %s whole", page, golden)
		}
	}
}

// makeReady reconciles the instance until it is ACTIVE, playing the
// controllers a test API server lacks: a Deployment's replicas become
// available, an Ingress gets an address.
func (r *rig) makeReady(g *graph.Graph, name string) {
	r.t.Helper()
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	ingresses := schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}
	for range 6 {
		if r.reconcile(g, name).State.State == reconciler.InstanceStateActive {
			return
		}
		r.setStatus(deployments, func(u map[string]any) map[string]any {
			n, _, _ := unstructured.NestedInt64(u, "spec", "replicas")
			return map[string]any{"replicas": n, "readyReplicas": n, "availableReplicas": n, "updatedReplicas": n}
		})
		r.setStatus(ingresses, func(map[string]any) map[string]any {
			return map[string]any{"loadBalancer": map[string]any{"ingress": []any{map[string]any{"hostname": "lb.example"}}}}
		})
	}
	r.t.Fatalf("instance %s never became ACTIVE", name)
}

// setStatus writes status(obj) as the status of every object of gvr in the
// rig's namespace.
func (r *rig) setStatus(gvr schema.GroupVersionResource, status func(map[string]any) map[string]any) {
	r.t.Helper()
	ctx := context.Background()
	res := r.set.Dynamic().Resource(gvr).Namespace(r.ns)
	list, err := res.List(ctx, metav1.ListOptions{})
	if err != nil {
		r.t.Fatal(err)
	}
	for i := range list.Items {
		it := &list.Items[i]
		it.Object["status"] = status(it.Object)
		if _, err := res.UpdateStatus(ctx, it, metav1.UpdateOptions{}); err != nil {
			r.t.Fatal(err)
		}
	}
}
