package apiservertest

import (
	"reflect"
	"sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/discovery"

	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/test/envtest"
)

// TestCachedSchemaResolver: the cached resolver returns what the API
// server's OpenAPI says (the same schema as the uncached resolver), fetches
// each GroupVersion document once however many kinds and builds read it,
// and fetches again when the server publishes a new document (a CRD's
// schema changed).
func TestCachedSchemaResolver(t *testing.T) {
	env := envtest.Start(t)
	disc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	c := graph.NewCachedSchemaResolver(disc, 0)
	direct := &resolver.ClientDiscoveryResolver{Discovery: disc}
	deploy := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	for _, gvk := range []schema.GroupVersionKind{deploy, {Group: "apps", Version: "v1", Kind: "StatefulSet"}, {Version: "v1", Kind: "Service"}, deploy} {
		got, err := c.ResolveSchema(gvk)
		if err != nil {
			t.Fatalf("%s: %v", gvk, err)
		}
		want, err := direct.ResolveSchema(gvk)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the cached resolver's schema differs from the API server's", gvk)
		}
	}
	if n := c.Fetches(); n != 2 {
		t.Errorf("fetched %d documents for apps/v1 and v1, want 2", n)
	}
	// Graphs are built concurrently (one goroutine per graph).
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.ResolveSchema(deploy); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := c.Fetches(); n != 2 {
		t.Errorf("concurrent resolves fetched again: %d documents", n)
	}
	if _, err := c.ResolveSchema(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Nope"}); err == nil {
		t.Error("an unknown kind resolved")
	}

	// A CRD, then a new field in its schema: seen at the next resolve.
	crd := func(fields ...string) *apiextensionsv1.CustomResourceDefinition {
		props := map[string]apiextensionsv1.JSONSchemaProps{}
		for _, f := range fields {
			props[f] = apiextensionsv1.JSONSchemaProps{Type: "string"}
		}
		return &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: "widgets.cache.kroscope.dev"},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: "cache.kroscope.dev", Scope: apiextensionsv1.NamespaceScoped,
				Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
					Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
						Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object", Properties: props}}}}}},
			},
		}
	}
	widget := schema.GroupVersionKind{Group: "cache.kroscope.dev", Version: "v1", Kind: "Widget"}
	hasField := func(f string) bool {
		s, err := c.ResolveSchema(widget)
		if err != nil {
			return false
		}
		_, ok := s.Properties["spec"].Properties[f]
		return ok
	}
	env.InstallCRDs(t, crd("a"))
	waitFor(t, "the CRD's schema", func() bool { return hasField("a") })
	before := c.Fetches()
	if !hasField("a") || c.Fetches() != before {
		t.Errorf("resolving the CRD again fetched its document again")
	}
	env.InstallCRDs(t, crd("a", "b"))
	waitFor(t, "the changed CRD's schema", func() bool { return hasField("b") })
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}
