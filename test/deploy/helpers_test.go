package deploy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/rights"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/test/envtest"
)

// What deploy/ names.
const (
	namespace      = "kroscope-system"
	serviceAccount = "kroscope"
	saUser         = "system:serviceaccount:" + namespace + ":" + serviceAccount
	leaseName      = "kroscope"
	// leaseNamespace is kroscope's default (--lease-namespace), its own
	// namespace, which the Deployment keeps so that a TUI with default
	// flags attaches; deploy/ creates the Lease there.
	leaseNamespace = "kroscope-system"
)

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func deployDir() string { return filepath.Join(repoRoot(), "deploy") }

// deployObjects reads the objects of every file deploy/kustomization.yaml
// lists, in its order.
func deployObjects(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(deployDir(), "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		t.Fatalf("deploy/kustomization.yaml: %v", err)
	}
	if len(k.Resources) == 0 {
		t.Fatal("deploy/kustomization.yaml lists no resources")
	}
	var out []*unstructured.Unstructured
	for _, f := range k.Resources {
		raw, err := os.ReadFile(filepath.Join(deployDir(), f))
		if err != nil {
			t.Fatal(err)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
		for {
			var obj map[string]any
			if err := dec.Decode(&obj); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				t.Fatalf("deploy/%s: %v", f, err)
			}
			if len(obj) > 0 {
				out = append(out, &unstructured.Unstructured{Object: obj})
			}
		}
	}
	return out
}

// applyDeploy applies deploy/'s objects for real (server-side apply, as
// `kubectl apply --server-side -k deploy/` would; the kustomization adds
// only a label). The test API server runs no controllers, so the
// Deployment starts no Pods.
func applyDeploy(t *testing.T, env *envtest.Env) {
	t.Helper()
	dyn := dynamic.NewForConfigOrDie(env.Config)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(env.Config)))
	force := true
	for _, obj := range deployObjects(t) {
		gvk := obj.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("%s: %v", gvk, err)
		}
		data, err := obj.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if ns := obj.GetNamespace(); ns != "" {
			ri = dyn.Resource(m.Resource).Namespace(ns)
		}
		if _, err := ri.Patch(ctxT(t), obj.GetName(), "application/apply-patch+yaml", data, metav1.PatchOptions{FieldManager: "deploy-test", Force: &force}); err != nil {
			t.Fatalf("applying %s %s: %v", gvk.Kind, obj.GetName(), err)
		}
	}
}

// saConfig is the ServiceAccount's identity: the admin impersonating it
// (the API server adds its groups, system:serviceaccounts and
// system:authenticated, as for its token).
func saConfig(env *envtest.Env) *rest.Config {
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: saUser}
	return cfg
}

// kubeconfig writes a kubeconfig for the admin of the test API server.
func kubeconfig(t *testing.T, cfg *rest.Config) string { return envtest.Kubeconfig(t, cfg) }

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// eventually polls cond every 200ms until it holds or timeout passes, then
// fails with what() (generous timeouts: the machine is shared).
func eventually(t *testing.T, timeout time.Duration, what func() string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(timeout); !cond(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", timeout, what())
		}
	}
}

// rgdObject decodes a ResourceGraphDefinition's YAML.
func rgdObject(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: obj}
}

// grantGraphs grants the ServiceAccount what serving each graph (YAML)
// takes, as `kroscope rbac --bind kroscope-system/kroscope` prints it:
// the test API server runs no kube-controller-manager, so the
// aggregation into kroscope:graphs is done by a binding per graph.
func grantGraphs(t *testing.T, env *envtest.Env, docs ...string) {
	t.Helper()
	set := env.Clients(t)
	kube := env.Kubernetes()
	for _, doc := range docs {
		rgds, err := graph.Parse([]byte(doc), t.Name())
		if err != nil {
			t.Fatal(err)
		}
		g, err := graph.NewBuilder(engine.GraphOptions(set, nil, false)...).Build(rgds[0])
		if err != nil {
			t.Fatal(err)
		}
		role, binding := rights.ClusterRole(g), rights.ClusterRoleBinding(g.Name, namespace, serviceAccount)
		if _, err := kube.RbacV1().ClusterRoles().Create(ctxT(t), role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctxT(t), binding, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), binding.Name, metav1.DeleteOptions{})
			_ = kube.RbacV1().ClusterRoles().Delete(context.Background(), role.Name, metav1.DeleteOptions{})
		})
	}
}
