package envtest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
)

// ApplyFiles creates every object of the YAML files (a test's setup: kro's
// chainsaw tests apply a CRD or an object an externalRef reads before their
// graph). CRDs are installed and waited for; other objects are created in
// their own namespace, or ns when they name none, and deleted when the test
// ends. An object that already exists is left as it is.
func (e *Env) ApplyFiles(t testing.TB, ns string, files ...string) {
	t.Helper()
	for _, f := range files {
		objs, err := readObjects(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, u := range objs {
			if u.GetKind() == "CustomResourceDefinition" {
				crd := &apiextensionsv1.CustomResourceDefinition{}
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				e.InstallCRDs(t, crd)
				continue
			}
			e.create(t, f, ns, u)
		}
	}
}

func (e *Env) create(t testing.TB, file, ns string, u *unstructured.Unstructured) {
	t.Helper()
	mapping, err := e.Clients(t).RESTMapper().RESTMapping(u.GroupVersionKind().GroupKind(), u.GroupVersionKind().Version)
	if err != nil {
		t.Fatalf("%s: %s %s: %v", file, u.GetKind(), u.GetName(), err)
	}
	dyn := dynamic.NewForConfigOrDie(e.Config)
	var res dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		if u.GetNamespace() == "" {
			u.SetNamespace(ns)
		}
		res = dyn.Resource(mapping.Resource).Namespace(u.GetNamespace())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = res.Create(ctx, u, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return
	}
	if err != nil {
		t.Fatalf("%s: creating %s %s: %v", file, u.GetKind(), u.GetName(), err)
	}
	t.Cleanup(func() { _ = res.Delete(context.Background(), u.GetName(), metav1.DeleteOptions{}) })
}

func readObjects(file string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		if len(obj) > 0 {
			out = append(out, &unstructured.Unstructured{Object: obj})
		}
	}
}
