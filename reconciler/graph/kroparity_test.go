package graph

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"

	"github.com/kroscope/kroscope/test/kroexamples"
)

// TestRenderMatchesKro renders the kro examples' children from their
// instances (defaulted as the API server would, from the generated CRD)
// and compares them with the objects kro's own end-to-end tests assert.
func TestRenderMatchesKro(t *testing.T) {
	pairs := map[string]string{
		"instance.yaml":        "%s-assert.yaml",
		"instance-update.yaml": "%s-update-assert.yaml",
		"valid-instance.yaml":  "%s-assert.yaml",
	}
	compared := 0
	for _, file := range kroexamples.RGDFiles(t) {
		dir := filepath.Dir(file)
		rgds, err := LoadFiles(file)
		if err != nil {
			t.Fatal(err)
		}
		g, err := NewBuilder().Build(rgds[0])
		if err != nil {
			t.Fatal(err)
		}
		for instFile, assertPattern := range pairs {
			inst := readYAML(t, filepath.Join(dir, instFile))
			if inst == nil {
				continue
			}
			defaultInstance(t, g, inst)
			vars := Vars{"schema": inst}
			for _, id := range g.TopologicalOrder {
				r := g.Resources[id]
				assertFile := filepath.Join(dir, fmt.Sprintf(assertPattern, assertName(r.GVK.Kind)))
				want := readYAML(t, assertFile)
				if want == nil {
					continue
				}
				u, err := r.Render(vars)
				if err != nil {
					t.Errorf("%s: render %s: %v", dir, id, err)
					continue
				}
				// kro's children read each other only by name here, so the
				// rendered object stands in for the observed one.
				vars[id] = u.Object
				for _, d := range subsetDiff(want, u.Object, "") {
					t.Errorf("%s vs %s: %s", filepath.Base(dir)+"/"+instFile, filepath.Base(assertFile), d)
				}
				compared++
			}
		}
	}
	if compared == 0 {
		t.Fatal("no kro assertion compared")
	}
	t.Logf("%d rendered objects match kro's assertions", compared)
}

func assertName(kind string) string {
	if kind == "HorizontalPodAutoscaler" {
		return "hpa"
	}
	return strings.ToLower(kind)
}

func readYAML(t *testing.T, path string) map[string]any {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	obj, err := decodeYAML(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return obj
}

// defaultInstance applies the CRD's defaults to the instance's spec.
func defaultInstance(t *testing.T, g *Graph, inst map[string]any) {
	t.Helper()
	v1 := g.Instance.CRD.Spec.Versions[0].Schema.OpenAPIV3Schema
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v1, internal, nil); err != nil {
		t.Fatal(err)
	}
	s, err := structuralschema.NewStructural(internal)
	if err != nil {
		t.Fatal(err)
	}
	structuraldefaulting.Default(inst, s)
}

// subsetDiff lists where got differs from want, for every leaf of want
// except the labels, annotations and generation kro's reconciler (not the
// template) sets, chainsaw's (filter) keys, and fields got lacks: those
// the API server defaults (the assertions read objects back from it).
func subsetDiff(want, got any, path string) []string {
	if got == nil {
		return nil
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: got %v, want an object", path, got)}
		}
		var out []string
		for _, k := range sortedKeys(w) {
			p := path + "." + k
			if strings.HasPrefix(k, "(") || p == ".metadata.labels" || p == ".metadata.annotations" || p == ".metadata.generation" || p == ".status" {
				continue
			}
			out = append(out, subsetDiff(w[k], g[k], p)...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: got %v, want %v", path, got, want)}
		}
		var out []string
		for i := range w {
			out = append(out, subsetDiff(w[i], g[i], fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	}
	if fmt.Sprint(want) != fmt.Sprint(got) {
		return []string{fmt.Sprintf("%s: got %#v, want %#v", path, got, want)}
	}
	return nil
}
