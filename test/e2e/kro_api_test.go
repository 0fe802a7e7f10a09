package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/yaml"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
	"github.com/kroscope/kroscope/test/graphs"
	"github.com/kroscope/kroscope/test/krocrds"
	"github.com/kroscope/kroscope/test/kroexamples"
	"github.com/kroscope/kroscope/test/prereq"
)

// defaultsRGD writes neither schema.scope nor schema.group: kro's CRD
// fills them in, as it does for every graph stored in a cluster running kro.
var defaultsRGD = graphs.RGD("kroapi-defaults", "KroAPIDefaults", "spec:\n  value: string | default=hello",
	graphs.ConfigMap("config", "${schema.metadata.name}-config", "value: ${schema.spec.value}"))

// TestKroCRDDefaultedGraphIsServed stores a graph through kro's real RGD
// CRD, which adds spec.schema.scope: Namespaced and group: kro.run; kroscope
// reads it back, builds it and serves it, and an instance reaches ACTIVE.
func TestKroCRDDefaultedGraphIsServed(t *testing.T) {
	r := newEngRig(t)
	r.env.InstallCRDs(t, krocrds.RGD(t))
	stored := r.applyYAML(graph.GroupVersionResource, "", defaultsRGD)
	t.Cleanup(func() {
		_ = r.dyn.Resource(graph.GroupVersionResource).Delete(context.Background(), stored.GetName(), metav1.DeleteOptions{})
	})
	scope, _, _ := unstructured.NestedString(stored.Object, "spec", "schema", "scope")
	group, _, _ := unstructured.NestedString(stored.Object, "spec", "schema", "group")
	if scope != "Namespaced" || group != "kro.run" {
		t.Fatalf("kro's CRD did not default the graph: scope %q group %q", scope, group)
	}
	rgd, err := graph.FromUnstructured(stored)
	if err != nil {
		t.Fatalf("reading the stored graph: %v", err)
	}
	if _, err := graph.NewBuilder().Build(rgd); err != nil {
		t.Fatalf("building the stored graph: %v", err)
	}

	run := r.start(func(o *engine.Options) { o.WatchClusterRGDs = true })
	gvr := run.graphServed("kroapi-defaults")
	r.createInstance(gvr, "KroAPIDefaults", "one", nil)
	run.allInState(gvr.Resource+"."+gvr.Group, 1, reconciler.InstanceStateActive, 2*time.Minute)
	cm, err := r.dyn.Resource(gvrConfigMap).Namespace(r.ns).Get(context.Background(), "one-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(cm.Object, "data", "value"); v != "hello" {
		t.Errorf("child data.value %q, want the schema default hello", v)
	}
}

// TestKroExamplesStoredThroughKroCRD: every kro example graph, stored
// through kro's CRD (defaulted and pruned by it), is read back and builds.
func TestKroExamplesStoredThroughKroCRD(t *testing.T) {
	files := kroexamples.RGDFiles(t)
	env := newEngRig(t)
	env.env.InstallCRDs(t, krocrds.RGD(t))
	ctx := context.Background()
	// kro v0.9.4's module: 8 graphs under examples/kubernetes, 11 chainsaw
	// tests. Fewer means a folder was lost on the way.
	if want := 19; prereq.KroVersion() == "v0.9.4" && !kroexamples.Elsewhere() && len(files) != want {
		t.Errorf("%d example graphs, want %d", len(files), want)
	}
	for _, f := range files {
		name := filepath.Base(filepath.Dir(f))
		t.Run(name, func(t *testing.T) {
			rgds, err := graph.LoadFiles(f)
			if err != nil || len(rgds) != 1 {
				t.Fatalf("loading %s: %d graphs, %v", f, len(rgds), err)
			}
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			u := env.applyYAMLRenamed(data, "kroapi-ex-"+strings.ToLower(name))
			t.Cleanup(func() {
				_ = env.dyn.Resource(graph.GroupVersionResource).Delete(ctx, u.GetName(), metav1.DeleteOptions{})
			})
			rgd, err := graph.FromUnstructured(u)
			if err != nil {
				t.Fatalf("reading %s back from the cluster: %v", name, err)
			}
			if rgd.Spec.Schema.Scope != graph.ScopeNamespaced {
				t.Errorf("scope %q, want kro's default Namespaced", rgd.Spec.Schema.Scope)
			}
			if _, err := graph.NewBuilder().Build(rgd); err != nil {
				t.Fatalf("building %s: %v", name, err)
			}
		})
	}
}

// applyYAMLRenamed stores a graph document under another name, so tests
// sharing the API server never collide on kro's example names.
func (r *engRig) applyYAMLRenamed(doc []byte, name string) *unstructured.Unstructured {
	r.t.Helper()
	obj := map[string]any{}
	if err := yaml.Unmarshal(doc, &obj); err != nil {
		r.t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetName(name)
	out, err := r.dyn.Resource(graph.GroupVersionResource).Create(context.Background(), u, metav1.CreateOptions{})
	if err != nil {
		r.t.Fatalf("storing %s through kro's CRD: %v", name, err)
	}
	return out
}

// clusterTenantRGD is a cluster-scoped instance kind whose children are a
// cluster-scoped ClusterRole and two ConfigMaps in the namespace the
// instance names; shortNames and categories make `kubectl get` work.
var clusterTenantRGD = graphs.RGD("kroapi-tenant", "KroAPITenant", `scope: Cluster
shortNames: [kroapitn]
categories: [kroapicat]
metadata:
  labels:
    example.com/team: platform
spec:
  namespace: string | required=true`,
	graphs.Template("role", "rbac.authorization.k8s.io/v1", "ClusterRole", "name: ${schema.metadata.name}-kroapi-reader",
		"rules:\n- apiGroups: [\"\"]\n  resources: [configmaps]\n  verbs: [get]"),
	graphs.Template("config", "v1", "ConfigMap", "name: ${schema.metadata.name}-config\nnamespace: ${schema.spec.namespace}", "data:\n  role: ${role.metadata.name}"),
	graphs.Template("second", "v1", "ConfigMap", "name: ${config.metadata.name}-second\nnamespace: ${schema.spec.namespace}", ""))

// tenantChildKinds allows clusterTenantRGD's ClusterRole (a sensitive
// kind: confine.Decide).
var tenantChildKinds = []schema.GroupKind{{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}}

// TestClusterScopedInstanceEndToEnd: a cluster-scoped instance's children
// (namespaced ones in the namespace its spec names, a cluster-scoped one)
// are created without an instance-namespace label, the instance reaches
// ACTIVE, and deleting it deletes them all. The engine is narrowed to one
// namespace (--namespace), which must not hide cluster-scoped instances.
func TestClusterScopedInstanceEndToEnd(t *testing.T) {
	r := newEngRig(t)
	path := r.writeFile("tenant.yaml", clusterTenantRGD)
	// Its cluster-scoped child is a ClusterRole: a sensitive kind, allowed
	// by the flag (confine.Decide).
	run := r.start(func(o *engine.Options) {
		o.RGDPaths = []string{path}
		o.AllowChildKinds = tenantChildKinds
	})
	gvr := run.graphServed("kroapi-tenant")
	ctx := context.Background()

	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	crd, err := r.dyn.Resource(crdGVR).Get(ctx, gvr.Resource+"."+gvr.Group, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sc, _, _ := unstructured.NestedString(crd.Object, "spec", "scope"); sc != "Cluster" || crd.GetLabels()["example.com/team"] != "platform" {
		t.Fatalf("served CRD: scope %q labels %v, want Cluster and the graph's label", sc, crd.GetLabels())
	}

	name := "t-" + r.ns[len(r.ns)-5:]
	inst := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvr.GroupVersion().String(), "kind": "KroAPITenant",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"namespace": r.ns},
	}}
	created, err := r.dyn.Resource(gvr).Create(ctx, inst, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating the cluster-scoped instance: %v", err)
	}
	resource := gvr.Resource + "." + gvr.Group
	run.waitFor(2*time.Minute, "the cluster-scoped instance ACTIVE", func(s *state.Snapshot) bool {
		in := s.Instance(state.InstanceKey{Resource: resource, Name: name})
		return in != nil && in.State == reconciler.InstanceStateActive
	})

	gvrRole := schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	children := []struct {
		gvr      schema.GroupVersionResource
		ns, name string
	}{
		{gvrRole, "", name + "-kroapi-reader"},
		{gvrConfigMap, r.ns, name + "-config"},
		{gvrConfigMap, r.ns, name + "-config-second"},
	}
	for _, c := range children {
		u, err := r.dyn.Resource(c.gvr).Namespace(c.ns).Get(ctx, c.name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("child %s: %v", c.name, err)
		}
		l := u.GetLabels()
		if _, has := l[metadata.InstanceNamespaceLabel]; has {
			t.Errorf("child %s has %s=%q; a cluster-scoped instance has no namespace", c.name, metadata.InstanceNamespaceLabel, l[metadata.InstanceNamespaceLabel])
		}
		if l[metadata.InstanceIDLabel] != string(created.GetUID()) {
			t.Errorf("child %s labels %v do not name the instance", c.name, l)
		}
	}
	if got, _ := r.dyn.Resource(gvr).Get(ctx, name, metav1.GetOptions{}); got != nil {
		if st, _, _ := unstructured.NestedString(got.Object, "status", "state"); st != reconciler.InstanceStateActive {
			t.Errorf("status.state written on the cluster-scoped instance is %q", st)
		}
	}

	if err := r.dyn.Resource(gvr).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for _, c := range append(children, struct {
		gvr      schema.GroupVersionResource
		ns, name string
	}{gvr, "", name}) {
		for {
			_, err := r.dyn.Resource(c.gvr).Namespace(c.ns).Get(ctx, c.name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s %s still there after deleting the instance (err %v)", c.gvr.Resource, c.name, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// TestShortNamesAndCategoriesServed: a graph's shortNames and categories
// reach the served CRD, the API server's discovery lists them, and kubectl
// finds instances by them.
func TestShortNamesAndCategoriesServed(t *testing.T) {
	r := newEngRig(t)
	path := r.writeFile("tenant.yaml", strings.NewReplacer("kroapi-tenant", "kroapi-names", "KroAPITenant", "KroAPINamed", "kroapitn", "kroapinm", "kroapicat", "kroapinames").Replace(clusterTenantRGD))
	run := r.start(func(o *engine.Options) {
		o.RGDPaths = []string{path}
		o.AllowChildKinds = tenantChildKinds
	})
	gvr := run.graphServed("kroapi-names")

	dc, err := discovery.NewDiscoveryClientForConfig(r.cfg)
	if err != nil {
		t.Fatal(err)
	}
	var found *metav1.APIResource
	deadline := time.Now().Add(time.Minute)
	for found == nil {
		list, err := dc.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
		if err == nil {
			for i := range list.APIResources {
				if list.APIResources[i].Name == gvr.Resource {
					found = &list.APIResources[i]
				}
			}
		}
		if found == nil {
			if time.Now().After(deadline) {
				t.Fatalf("%s not in discovery: %v", gvr, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	if !slices.Equal(found.ShortNames, []string{"kroapinm"}) || !slices.Equal(found.Categories, []string{"kroapinames"}) || found.Namespaced {
		t.Fatalf("discovery lists shortNames %v categories %v namespaced %v", found.ShortNames, found.Categories, found.Namespaced)
	}

	// The kubectl hack/assets.sh builds (a missing one fails under CI).
	kubectl := prereq.Kubectl(t)
	name := "n-" + r.ns[len(r.ns)-5:]
	inst := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvr.GroupVersion().String(), "kind": "KroAPINamed",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"namespace": r.ns},
	}}
	if _, err := r.dyn.Resource(gvr).Create(context.Background(), inst, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.dyn.Resource(gvr).Delete(context.Background(), name, metav1.DeleteOptions{}) })
	kc := kubeconfig(t, r.cfg)
	for _, alias := range []string{"kroapinm", "kroapinames"} {
		out, err := exec.Command(kubectl, "--kubeconfig", kc, "--cache-dir", t.TempDir(), "get", alias, "-o", "name").CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl get %s: %v\n%s", alias, err, out)
		}
		if want := fmt.Sprintf("kroapinamed.%s/%s", gvr.Group, name); !strings.Contains(string(out), want) {
			t.Errorf("kubectl get %s printed %q, want %s", alias, out, want)
		}
	}
}

// TestNewerKroFieldFromClusterIsReported: a graph stored through a newer
// kro's RGD CRD (here kro's CRD with one more spec.schema field) carries a
// field kroscope does not know; the engine reports the graph as needing a
// newer kroscope instead of serving it without the field.
func TestNewerKroFieldFromClusterIsReported(t *testing.T) {
	r := newEngRig(t)
	real := krocrds.RGD(t)
	newer := real.DeepCopy()
	schemaProps := newer.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["schema"]
	schemaProps.Properties["futureField"] = apiextensionsv1.JSONSchemaProps{Type: "string"}
	newer.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["schema"] = schemaProps
	r.env.InstallCRDs(t, newer)
	t.Cleanup(func() { r.env.InstallCRDs(t, real) })

	doc := strings.NewReplacer("kroapi-defaults", "kroapi-future",
		"    kind: KroAPIDefaults\n", "    kind: KroAPIFuture\n    futureField: soon\n").Replace(defaultsRGD)
	// The API server serves a replaced CRD's schema a moment after the
	// update: store the graph again until the new field is kept.
	rgds := r.dyn.Resource(graph.GroupVersionResource)
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for {
		stored := r.applyYAML(graph.GroupVersionResource, "", doc)
		if v, _, _ := unstructured.NestedString(stored.Object, "spec", "schema", "futureField"); v == "soon" {
			break
		}
		_ = rgds.Delete(ctx, stored.GetName(), metav1.DeleteOptions{})
		if time.Now().After(deadline) {
			t.Fatalf("the newer CRD did not keep futureField: %v", stored.Object["spec"])
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Cleanup(func() { _ = rgds.Delete(ctx, "kroapi-future", metav1.DeleteOptions{}) })
	run := r.start(func(o *engine.Options) { o.WatchClusterRGDs = true })
	snap := run.waitFor(time.Minute, "graph kroapi-future reported", func(s *state.Snapshot) bool {
		for _, g := range s.Graphs {
			if g.Name == "kroapi-future" && g.Err != "" {
				return true
			}
		}
		return false
	})
	for _, g := range snap.Graphs {
		if g.Name != "kroapi-future" {
			continue
		}
		if g.Served || !strings.Contains(g.Err, "needs a newer kroscope: field spec.schema.futureField") {
			t.Fatalf("graph served %v, error %q", g.Served, g.Err)
		}
	}
}
