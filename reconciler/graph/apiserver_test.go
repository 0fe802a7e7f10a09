package graph

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kroscope/kroscope/test/envtest"
)

func TestMain(m *testing.M) {
	// controller-runtime's envtest logs through a logger nobody set.
	ctrllog.SetLogger(logr.Discard())
	os.Exit(envtest.Run(m))
}

// TestExampleCRDsOnAPIServer installs the CRD built for every kro example
// (spec from SimpleSchema, status inferred from the status expressions) in
// a real API server, creates the example's instance, and writes the status
// RenderStatus produces from observed children: the API server must keep
// every projected field with the type inferred for it.
func TestExampleCRDsOnAPIServer(t *testing.T) {
	files := exampleRGDs(t)
	env := envtest.Start(t)
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ns := env.Namespace(t)
	ctx := context.Background()
	// Observed children with the fields the examples' status reads.
	observed := Vars{
		"deployment": map[string]any{
			"metadata": map[string]any{"name": "web"},
			"status": map[string]any{
				"availableReplicas": int64(2),
				"conditions":        []any{map[string]any{"type": "Available", "status": "True"}},
			},
		},
		"ingress": map[string]any{"status": map[string]any{"loadBalancer": map[string]any{
			"ingress": []any{map[string]any{"hostname": "web.example.com"}},
		}}},
		"service": map[string]any{"metadata": map[string]any{"name": "web"}},
	}
	for _, file := range files {
		dir := filepath.Dir(file)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			rgds, err := LoadFiles(file)
			if err != nil {
				t.Fatal(err)
			}
			g, err := NewBuilder().Build(rgds[0])
			if err != nil {
				t.Fatal(err)
			}
			if g.Instance.CRD == nil {
				t.Fatal("no CRD built")
			}
			env.InstallCRDs(t, g.Instance.CRD)
			instFile := filepath.Join(dir, "instance.yaml")
			if _, err := os.Stat(instFile); err != nil {
				instFile = filepath.Join(dir, "valid-instance.yaml")
			}
			data, err := os.ReadFile(instFile)
			if err != nil {
				t.Skipf("no instance for %s", dir)
			}
			obj, err := decodeYAML(data)
			if err != nil {
				t.Fatal(err)
			}
			inst := &unstructured.Unstructured{Object: obj}
			inst.SetNamespace(ns)
			res := dyn.Resource(g.Instance.GVR).Namespace(ns)
			created, err := res.Create(ctx, inst, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("creating %s: %v", instFile, err)
			}
			vars := Vars{"schema": map[string]any{
				"apiVersion": created.GetAPIVersion(), "kind": created.GetKind(),
				"metadata": created.Object["metadata"], "spec": created.Object["spec"],
			}}
			for k, v := range observed {
				vars[k] = v
			}
			status, err := g.RenderStatus(vars)
			if err != nil {
				t.Fatalf("RenderStatus: %v", err)
			}
			if len(g.Status) > 0 && len(status) == 0 {
				t.Fatalf("no status field resolved")
			}
			status["state"] = "ACTIVE"
			created.Object["status"] = status
			updated, err := res.UpdateStatus(ctx, created, metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("writing status %v: %v", status, err)
			}
			if got := updated.Object["status"]; !reflect.DeepEqual(got, any(status)) {
				t.Errorf("API server kept status %v, wrote %v", got, status)
			}
		})
	}
}
