package plan_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/test/engrun"
	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/kroexamples"
)

// editedLabel is the edit made to every template of an example graph.
const editedLabel = "plan.kroscope.dev/edited"

// TestPlanKroExamples is issue 28's "done when": for each of kro's
// example graphs with an instance, kroscope's engine serves the graph and
// reconciles the instance; the plan of the graph with every template
// edited is then compared with what the engine does once it serves the
// edited graph.
func TestPlanKroExamples(t *testing.T) {
	ran, changed := 0, 0
	for _, file := range kroexamples.RGDFiles(t) {
		dir := filepath.Dir(file)
		inst := filepath.Join(dir, "instance.yaml")
		if _, err := os.Stat(inst); err != nil {
			continue
		}
		t.Run(kroexamples.Name(file), func(t *testing.T) {
			r := newRig(t)
			r.env.ApplyFiles(t, "default", kroexamples.SetupFiles(t, dir)...)
			if planExample(r, file, inst, fmt.Sprintf("Planned%d", ran)) {
				changed++
			}
		})
		ran++
	}
	if ran < 5 || changed < ran-2 {
		t.Errorf("of %d kro examples with an instance.yaml, the edit changed %d", ran, changed)
	}
}

// planExample serves the example, plans its edited graph and compares;
// it reports whether the edit changed anything (an example whose
// resources are all external references has no template to edit).
func planExample(r *rig, file, instFile, kindSuffix string) bool {
	t := r.t
	orig, edited := copyGraph(t, file, kindSuffix, false), copyGraph(t, file, kindSuffix, true)
	u := r.object(string(mustRead(t, instFile)))
	u.SetNamespace(r.ns)
	// An example whose children go where spec.namespace says asks for the
	// instance's own namespace: a namespace computed from the spec must be
	// the instance's (reconciler/confine, docs/security.md).
	if schemaHasNamespace(t, orig) {
		if err := unstructured.SetNestedField(u.Object, r.ns, "spec", "namespace"); err != nil {
			t.Fatal(err)
		}
	}
	u.SetKind(u.GetKind() + kindSuffix)
	name := u.GetName()
	serveWithEngine(r, orig, u)
	g := r.buildFile(edited)
	uid := r.uid(g, name)
	before := r.children(uid, g)
	p := r.plan(g, nil)
	serveWithEngine(r, edited, nil)
	after := r.children(uid, g)
	got, want := planned(instanceOf(t, p, name)), outcome(before, after)
	expect(t, "the plan against what the engine did", got, want)
	return len(want) > 0
}

// serveWithEngine runs kroscope's engine on the graph file until the
// instance (created first when create is set) is ACTIVE, writing the
// status the test server's missing controllers would, then stops it.
func serveWithEngine(r *rig, file string, create *unstructured.Unstructured) {
	r.t.Helper()
	run := engrun.Start(r.t, engrun.Config{Rest: r.env.Config, Namespace: r.ns, LogLines: 30, RequeueInterval: 2 * time.Second}, func(o *engine.Options) {
		o.RGDPaths = []string{file}
	})
	defer func() { _ = run.Stop() }()
	if create != nil {
		run.Until(time.Minute, "the graph served", func(s *state.Snapshot) (bool, string) {
			return len(s.Graphs) == 1 && s.Graphs[0].Served, ""
		})
		gvr := r.instanceGVR(create)
		if _, err := r.set.Dynamic().Resource(gvr).Namespace(r.ns).Create(context.Background(), create, metav1.CreateOptions{}); err != nil {
			r.t.Fatalf("creating the instance: %v", err)
		}
	}
	run.Until(2*time.Minute, "the instance ACTIVE", func(s *state.Snapshot) (bool, string) {
		for _, in := range s.Instances {
			r.fakeControllers(in)
			if in.State == reconciler.InstanceStateActive && in.ObservedGeneration == in.Generation && in.Reconciles > 0 {
				return true, ""
			}
		}
		return false, ""
	})
}

func (r *rig) instanceGVR(u *unstructured.Unstructured) schema.GroupVersionResource {
	r.t.Helper()
	r.set.RESTMapper().Reset()
	gvk := u.GroupVersionKind()
	m, err := r.set.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		r.t.Fatalf("mapping %s: %v", gvk, err)
	}
	return m.Resource
}

// fakeControllers writes the status kube-controller-manager would on the
// Deployments and Jobs the instance waits for.
func (r *rig) fakeControllers(in *state.Instance) {
	for _, res := range in.Resources {
		if res.State != reconciler.ResourceStateWaitingForReadiness || res.Name == "" {
			continue
		}
		gvr := map[string]schema.GroupVersionResource{
			"Deployment": {Group: "apps", Version: "v1", Resource: "deployments"},
			"Job":        {Group: "batch", Version: "v1", Resource: "jobs"},
		}[res.Kind]
		if gvr.Resource == "" {
			continue
		}
		ri := r.set.Dynamic().Resource(gvr).Namespace(res.Namespace)
		u, err := ri.Get(context.Background(), res.Name, metav1.GetOptions{})
		if err != nil {
			continue
		}
		if st, ok := envtest.ControllerStatus(u); ok {
			u.Object["status"] = st
			_, _ = ri.UpdateStatus(context.Background(), u, metav1.UpdateOptions{})
		}
	}
}

// copyGraph writes a copy of the graph with kindSuffix added to its kind
// (two examples share the kind Something, and a CRD outlives its test on
// the shared API server) and, when edit, a label added to every template,
// and returns its path.
func copyGraph(t *testing.T, file, kindSuffix string, edit bool) string {
	t.Helper()
	var rgd map[string]any
	if err := yaml.Unmarshal(mustRead(t, file), &rgd); err != nil {
		t.Fatal(err)
	}
	kind, _, _ := unstructured.NestedString(rgd, "spec", "schema", "kind")
	_ = unstructured.SetNestedField(rgd, kind+kindSuffix, "spec", "schema", "kind")
	resources, _, _ := unstructured.NestedSlice(rgd, "spec", "resources")
	for _, res := range resources {
		tmpl, ok := res.(map[string]any)["template"].(map[string]any)
		if !ok || !edit {
			continue
		}
		_ = unstructured.SetNestedField(tmpl, "yes", "metadata", "labels", editedLabel)
	}
	_ = unstructured.SetNestedSlice(rgd, resources, "spec", "resources")
	out, err := yaml.Marshal(rgd)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), fmt.Sprintf("%v-%s", edit, filepath.Base(file)))
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// buildFile builds the graph in a file as the engine does.
func (r *rig) buildFile(path string) *graph.Graph {
	r.t.Helper()
	return r.build(strings.TrimSpace(string(mustRead(r.t, path))))
}

// schemaHasNamespace reports whether the graph in file declares
// spec.namespace in its schema.
func schemaHasNamespace(t *testing.T, file string) bool {
	t.Helper()
	var rgd map[string]any
	if err := yaml.Unmarshal(mustRead(t, file), &rgd); err != nil {
		t.Fatal(err)
	}
	_, ok, _ := unstructured.NestedFieldNoCopy(rgd, "spec", "schema", "spec", "namespace")
	return ok
}
