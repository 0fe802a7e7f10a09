package plan

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kroscope/kroscope/memcluster"
)

// An instance file that names no namespace is planned in FileNamespace,
// as kubectl apply -f puts it in the context's namespace (#38: `kroscope
// plan -i` without -n planned it nowhere, a usage problem reported as a
// failure, exit status 2). The in-memory API server answers the dry runs.
func TestInstanceFileTakesFileNamespace(t *testing.T) {
	ctx := context.Background()
	g := renderAppGraph(t)
	c := memcluster.New(memcluster.Options{Namespaces: []string{"team-a"}, Seed: 1})
	crd, err := toUnstructured(g.Instance.CRD)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Dynamic().Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	inst := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kro.run/v1alpha1", "kind": "RenderApp",
		"metadata": map[string]any{"name": "shop"},
		"spec":     map[string]any{"password": "hunter2-long"},
	}}
	p, err := Graph(ctx, g, Options{Set: c.ClientSet(), Instances: []*unstructured.Unstructured{inst}, FileNamespace: "team-a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Instances) != 1 || p.Instances[0].Namespace != "team-a" {
		t.Fatalf("planned %+v, want the instance in team-a", p.Instances)
	}
	for _, o := range p.Instances[0].Objects {
		if o.Op == OpFail {
			t.Errorf("%s %s would fail: %s", o.Kind, o.Name, o.Message)
		}
	}
	if s := Summarize([]*Plan{p}); s.Create != 2 {
		t.Errorf("%+v, want the Secret and the Deployment created", s)
	}
	if inst.GetNamespace() != "" {
		t.Errorf("the caller's instance changed: namespace %q", inst.GetNamespace())
	}
}
