package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/kroscope/kroscope/reconciler/graph/crd/crdtest"
	"github.com/kroscope/kroscope/test/envtest"
)

// crdEnv is what the CRD tests need from the API server.
type crdEnv struct {
	env *envtest.Env
	dyn dynamic.Interface
	ext apiextensionsclient.Interface
}

func newCRDEnv(t *testing.T) *crdEnv {
	t.Helper()
	env := envtest.Start(t)
	ext, err := apiextensionsclient.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return &crdEnv{env: env, dyn: dyn, ext: ext}
}

func crdExamples(t *testing.T) []crdtest.Example {
	t.Helper()
	return crdtest.KroExamples(t)
}

// install installs a generated CRD and checks that the API server
// established it and kept its schema.
func (e *crdEnv) install(t *testing.T, c *apiextensionsv1.CustomResourceDefinition) schema.GroupVersionResource {
	t.Helper()
	e.env.InstallCRDs(t, c.DeepCopy())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got, err := e.ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, c.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get CRD %s: %v", c.Name, err)
	}
	established := false
	for _, cond := range got.Status.Conditions {
		if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
			established = true
		}
		if cond.Type == apiextensionsv1.NonStructuralSchema && cond.Status == apiextensionsv1.ConditionTrue {
			t.Errorf("CRD %s: schema is not structural: %s", c.Name, cond.Message)
		}
	}
	if !established {
		t.Errorf("CRD %s is not Established: %+v", c.Name, got.Status.Conditions)
	}
	if got.Labels["app.kubernetes.io/managed-by"] != "kroscope" {
		t.Errorf("CRD %s labels %v", c.Name, got.Labels)
	}
	return schema.GroupVersionResource{Group: c.Spec.Group, Version: c.Spec.Versions[0].Name, Resource: c.Spec.Names.Plural}
}

func readObject(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &unstructured.Unstructured{Object: m}
}

func (e *crdEnv) create(t *testing.T, gvr schema.GroupVersionResource, ns string, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return e.dyn.Resource(gvr).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{})
}

// TestKroExampleCRDsAreAccepted installs the instance CRD of every kro
// example on the real API server, and creates the example's instance.
func TestKroExampleCRDsAreAccepted(t *testing.T) {
	ce := newCRDEnv(t)
	for _, ex := range crdExamples(t) {
		t.Run(ex.Name, func(t *testing.T) {
			c, err := crdtest.CRDFromFile(ex.Path)
			if err != nil {
				t.Fatal(err)
			}
			gvr := ce.install(t, c)
			inst := filepath.Join(ex.Dir, "instance.yaml")
			if _, err := os.Stat(inst); err != nil {
				return
			}
			// A namespace each: two examples share a kind and an instance
			// name, and some instance files name a namespace of their own.
			ns := ce.env.Namespace(t)
			obj := readObject(t, inst)
			obj.SetNamespace(ns)
			if _, err := ce.create(t, gvr, ns, obj); err != nil {
				t.Errorf("instance %s rejected: %v", inst, err)
			}
		})
	}
}

// TestGoldenGraphCRDsAreAccepted installs the CRDs of the crd package's own
// golden graphs (every SimpleSchema feature) on the real API server.
func TestGoldenGraphCRDsAreAccepted(t *testing.T) {
	ce := newCRDEnv(t)
	ex, err := crdtest.Examples(filepath.Join("..", "..", "reconciler", "graph", "crd", "testdata", "rgd"))
	if err != nil || len(ex) == 0 {
		t.Fatalf("no graphs in reconciler/graph/crd/testdata/rgd: %v", err)
	}
	for _, e := range ex {
		t.Run(e.Name, func(t *testing.T) {
			c, err := crdtest.CRDFromFile(e.Path)
			if err != nil {
				t.Fatal(err)
			}
			ce.install(t, c)
		})
	}
}

// TestWebAppDefaultsWithoutEmptyObjects shows the nested defaults kro needed
// `service: {}` for: an instance with only a name gets every default.
func TestWebAppDefaultsWithoutEmptyObjects(t *testing.T) {
	ce := newCRDEnv(t)
	var path string
	for _, ex := range crdExamples(t) {
		if ex.Name == "webapp" {
			path = ex.Path
		}
	}
	if path == "" {
		t.Skip("no webapp example")
	}
	c, err := crdtest.CRDFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	gvr := ce.install(t, c)
	got, err := ce.create(t, gvr, ce.env.Namespace(t), &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kro.run/v1alpha1", "kind": "WebApp",
		"metadata": map[string]any{"name": "bare"},
		"spec":     map[string]any{"name": "bare"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]any{
		"service.enabled": true, "ingress.enabled": false, "image": "nginx", "port": int64(8080),
	} {
		v, found, err := unstructured.NestedFieldNoCopy(got.Object, append([]string{"spec"}, strings.Split(path, ".")...)...)
		if err != nil || !found || v != want {
			t.Errorf("spec.%s = %v (found %v, %v), want %v", path, v, found, err, want)
		}
	}
}

// TestValidationMarkersOnAPIServer runs kro's check-validation-markers
// example: the valid instance is accepted, and each invalid one is
// rejected by the API server with the message its marker implies.
func TestValidationMarkersOnAPIServer(t *testing.T) {
	ce := newCRDEnv(t)
	var dir string
	for _, ex := range crdExamples(t) {
		if ex.Name == "check-validation-markers" {
			dir = ex.Dir
		}
	}
	if dir == "" {
		t.Skip("no check-validation-markers example")
	}
	c, err := crdtest.CRDFromFile(filepath.Join(dir, "rgd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	gvr := ce.install(t, c)
	ns := ce.env.Namespace(t)

	valid, err := ce.create(t, gvr, ns, readObject(t, filepath.Join(dir, "valid-instance.yaml")))
	if err != nil {
		t.Fatalf("valid-instance.yaml rejected: %v", err)
	}
	if v, _, _ := unstructured.NestedInt64(valid.Object, "spec", "replicas"); v != 3 {
		t.Errorf("valid instance replicas %d", v)
	}

	// What each invalid instance breaks, as the API server words it. kro's
	// *-error.yaml files only name the object that must not exist.
	want := map[string][]string{
		"invalid-instance-min-items.yaml":      {"spec.tags", "should have at least 1 items"},
		"invalid-instance-max-items.yaml":      {"spec.tags", "Too many: 4: must have at most 3 items"},
		"invalid-instance-array-limits.yaml":   {"spec.tags", "Too many: 6: must have at most 3 items", "spec.priorities", "Too many: 4: must have at most 3 items"},
		"invalid-instance-priorities-max.yaml": {"spec.priorities", "Too many: 4: must have at most 3 items"},
		"invalid-length-instance.yaml":         {"spec.username", "should be at least 3 chars long"},
		"invalid-pattern-instance.yaml":        {"spec.email", "should match '^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\\.[a-zA-Z]{2,}$'"},
		"invalid-unique-instance.yaml":         {"spec.tags[2]", `Duplicate value: "production"`},
	}
	files, err := filepath.Glob(filepath.Join(dir, "invalid-*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tested := 0
	for _, f := range files {
		name := filepath.Base(f)
		if strings.HasSuffix(name, "-error.yaml") {
			continue
		}
		tested++
		t.Run(name, func(t *testing.T) {
			obj := readObject(t, f)
			_, err := ce.create(t, gvr, ns, obj)
			if err == nil {
				t.Fatalf("%s was accepted; the API server must reject it", name)
			}
			if !apierrors.IsInvalid(err) {
				t.Errorf("want an Invalid error, got %v", err)
			}
			subs, ok := want[name]
			if !ok {
				t.Fatalf("no expected message for %s; rejected with: %v", name, err)
			}
			for _, s := range subs {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("rejection of %s\n  %v\ndoes not mention\n  %s", name, err, s)
				}
			}
			// kro's error files: the object must not exist.
			errFile := filepath.Join(dir, strings.TrimSuffix(name, "-instance.yaml")+"-error.yaml")
			if _, statErr := os.Stat(errFile); statErr == nil {
				gone := readObject(t, errFile)
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				_, err := ce.dyn.Resource(gvr).Namespace(ns).Get(ctx, gone.GetName(), metav1.GetOptions{})
				if !apierrors.IsNotFound(err) {
					t.Errorf("%s names %s, which must not exist; get: %v", filepath.Base(errFile), gone.GetName(), err)
				}
			}
		})
	}
	if tested != len(want) {
		t.Errorf("tested %d invalid instances, expected %d", tested, len(want))
	}
}

// TestMarkersOnAPIServer checks the markers the kro examples do not use —
// enum, immutable, validation, custom types, nested defaults — against the
// real API server.
func TestMarkersOnAPIServer(t *testing.T) {
	ce := newCRDEnv(t)
	c, err := crdtest.CRDFromYAML([]byte(`
apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata:
  name: crd-e2e-markers
spec:
  schema:
    apiVersion: v1alpha1
    kind: CrdE2EMarkers
    group: e2e.kroscope.dev
    types:
      Port:
        number: integer | default=80 minimum=1 maximum=65535
        protocol: string | default=TCP enum="TCP,UDP"
      Name: string | required=true minLength=2
    spec:
      name: Name | immutable=true
      size: integer | default=2 validation="self % 2 == 0"
      ports: "[]Port | maxItems=2"
      primary: Port
      labels: "map[string]string"
    validation:
      - expression: "!has(self.labels) || size(self.labels) <= 2"
        message: at most two labels
`))
	if err != nil {
		t.Fatal(err)
	}
	gvr := ce.install(t, c)
	ns := ce.env.Namespace(t)
	mk := func(name string, spec map[string]any) *unstructured.Unstructured {
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "e2e.kroscope.dev/v1alpha1", "kind": "CrdE2EMarkers",
			"metadata": map[string]any{"name": name},
		}}
		if spec != nil {
			obj.Object["spec"] = spec
		}
		return obj
	}

	got, err := ce.create(t, gvr, ns, mk("ok", map[string]any{"name": "ab", "ports": []any{map[string]any{"number": int64(443)}}}))
	if err != nil {
		t.Fatalf("valid instance rejected: %v", err)
	}
	for path, want := range map[string]any{"size": int64(2), "primary.number": int64(80), "primary.protocol": "TCP"} {
		v, _, _ := unstructured.NestedFieldNoCopy(got.Object, append([]string{"spec"}, strings.Split(path, ".")...)...)
		if v != want {
			t.Errorf("spec.%s = %v, want default %v", path, v, want)
		}
	}
	ports, _, _ := unstructured.NestedSlice(got.Object, "spec", "ports")
	if len(ports) != 1 || ports[0].(map[string]any)["protocol"] != "TCP" {
		t.Errorf("list item defaults not applied: %v", ports)
	}

	// An instance without spec passes admission, as under kro's CRD (whose
	// root requires nothing): the reconciler then reports the missing
	// fields. Requiring spec would make kroscope's CRD differ from kro's,
	// and a takeover of kro's CRD would see "spec newly required".
	if _, err := ce.create(t, gvr, ns, mk("no-spec", nil)); err != nil {
		t.Errorf("instance without spec rejected: %v", err)
	}

	rejections := []struct {
		name string
		spec map[string]any
		want []string
	}{
		{"missing-required", map[string]any{}, []string{"spec.name", "Required value"}},
		{"too-short", map[string]any{"name": "a"}, []string{"spec.name", "should be at least 2 chars long"}},
		{"odd-size", map[string]any{"name": "ab", "size": int64(3)}, []string{"spec.size", "validation failed"}},
		{"bad-enum", map[string]any{"name": "ab", "primary": map[string]any{"protocol": "SCTP"}}, []string{"spec.primary.protocol", `Unsupported value: "SCTP"`}},
		{"port-range", map[string]any{"name": "ab", "primary": map[string]any{"number": int64(70000)}}, []string{"spec.primary.number", "should be less than or equal to 65535"}},
		{"too-many-labels", map[string]any{"name": "ab", "labels": map[string]any{"a": "1", "b": "2", "c": "3"}}, []string{"at most two labels"}},
	}
	for _, r := range rejections {
		t.Run(r.name, func(t *testing.T) {
			_, err := ce.create(t, gvr, ns, mk(r.name, r.spec))
			if err == nil {
				t.Fatal("accepted; the API server must reject it")
			}
			for _, s := range r.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("rejection\n  %v\ndoes not mention\n  %s", err, s)
				}
			}
		})
	}

	t.Run("immutable", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cur, err := ce.dyn.Resource(gvr).Namespace(ns).Get(ctx, "ok", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := unstructured.SetNestedField(cur.Object, "changed", "spec", "name"); err != nil {
			t.Fatal(err)
		}
		_, err = ce.dyn.Resource(gvr).Namespace(ns).Update(ctx, cur, metav1.UpdateOptions{})
		if err == nil || !strings.Contains(err.Error(), "field is immutable") {
			t.Errorf("changing an immutable field: want \"field is immutable\", got %v", err)
		}
	})
}
