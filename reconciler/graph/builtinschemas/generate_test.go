//go:build generate

package builtinschemas

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	"github.com/kroscope/kroscope/test/envtest"
)

// TestGenerate writes schemas.json.gz from the test API server: every
// GroupVersion it serves by itself (CRDs' groups are left out), with
// components.schemas only and no descriptions. Run by `make
// builtin-schemas`.
func TestGenerate(t *testing.T) {
	env := envtest.Start(t)
	d, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	crdGroups := map[string]bool{}
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	crds, err := env.Clients(t).Dynamic().Resource(crdGVR).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range crds.Items {
		group, _, _ := unstructured.NestedString(c.Object, "spec", "group")
		crdGroups[group] = true
	}
	paths, err := d.OpenAPIV3().Paths()
	if err != nil {
		t.Fatal(err)
	}
	v, err := d.ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	out := Documents{KubernetesVersion: v.GitVersion, Paths: map[string]json.RawMessage{}}
	for p, gv := range paths {
		parts := strings.Split(p, "/")
		served := (parts[0] == "api" && len(parts) == 2) || (parts[0] == "apis" && len(parts) == 3 && !crdGroups[parts[1]])
		if !served {
			continue
		}
		raw, err := gv.Schema("application/json")
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		var doc struct {
			Components struct {
				Schemas map[string]any `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		kept := map[string]any{"components": map[string]any{"schemas": withoutDescriptions(doc.Components.Schemas)}}
		b, err := json.Marshal(kept)
		if err != nil {
			t.Fatal(err)
		}
		out.Paths[p] = b
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(File, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: Kubernetes %s, %d GroupVersions, %d bytes (%d unzipped)", File, out.KubernetesVersion, len(out.Paths), gz.Len(), len(b))
}

// withoutDescriptions drops every "description" of a schema tree: type
// checking reads none, and they are most of the bytes.
func withoutDescriptions(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			if k == "description" {
				if _, isText := e.(string); isText {
					continue
				}
			}
			m[k] = withoutDescriptions(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = withoutDescriptions(e)
		}
		return l
	}
	return v
}
