// Package crdtest builds instance CRDs straight from ResourceGraphDefinition
// files, reading only spec.schema, so CRD tests (unit and end-to-end) need
// not depend on the graph package. Status projections are not inferred:
// that is the graph's job; the CRDs get only state and conditions.
package crdtest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/kroscope/kroscope/reconciler/graph/crd"
	"github.com/kroscope/kroscope/reconciler/graph/simpleschema"
	"github.com/kroscope/kroscope/test/kroexamples"
)

// KroExamples returns kro's example graphs (see test/kroexamples), skipping
// (failing under CI=true) when they are not built.
func KroExamples(t testing.TB) []Example {
	t.Helper()
	var out []Example
	for _, f := range kroexamples.RGDFiles(t) {
		out = append(out, Example{Name: kroexamples.Name(f), Dir: filepath.Dir(f), Path: f})
	}
	return out
}

// Example is one kro example graph file.
type Example struct {
	// Name is the example's folder name.
	Name string
	// Dir is the example's folder; Path its graph file.
	Dir, Path string
}

// Examples lists the graph files (rg*.yaml, not the *-assert.yaml ones) of
// every example under dir, sorted by name.
func Examples(dir string) ([]Example, error) {
	matches, err := filepath.Glob(filepath.Join(dir, "*", "rg*.yaml"))
	if err != nil {
		return nil, err
	}
	var out []Example
	for _, m := range matches {
		if strings.HasSuffix(m, "-assert.yaml") {
			continue
		}
		out = append(out, Example{Name: filepath.Base(filepath.Dir(m)), Dir: filepath.Dir(m), Path: m})
	}
	slices.SortFunc(out, func(a, b Example) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// rgd is the part of a ResourceGraphDefinition a CRD is made from.
type rgd struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Schema struct {
			APIVersion               string                                           `json:"apiVersion"`
			Kind                     string                                           `json:"kind"`
			Group                    string                                           `json:"group"`
			Spec                     map[string]any                                   `json:"spec"`
			Types                    map[string]any                                   `json:"types"`
			AdditionalPrinterColumns []apiextensionsv1.CustomResourceColumnDefinition `json:"additionalPrinterColumns"`
			Validation               []struct {
				Expression string `json:"expression"`
				Message    string `json:"message"`
			} `json:"validation"`
		} `json:"schema"`
	} `json:"spec"`
}

// CRDFromFile builds the instance CRD of the graph in a YAML file.
func CRDFromFile(path string) (*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	crd, err := CRDFromYAML(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return crd, nil
}

// CRDFromYAML builds the instance CRD of one ResourceGraphDefinition document.
func CRDFromYAML(data []byte) (*apiextensionsv1.CustomResourceDefinition, error) {
	var r rgd
	if err := yaml.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	s := r.Spec.Schema
	spec, err := simpleschema.ToOpenAPI(s.Spec, s.Types)
	if err != nil {
		return nil, err
	}
	in := crd.Input{
		Group:          s.Group,
		APIVersion:     s.APIVersion,
		Kind:           s.Kind,
		Spec:           spec,
		PrinterColumns: s.AdditionalPrinterColumns,
		GraphName:      r.Metadata.Name,
	}
	for _, v := range s.Validation {
		in.Validation = append(in.Validation, crd.ValidationRule{Expression: v.Expression, Message: v.Message})
	}
	return crd.New(in)
}

// MarshalYAML renders a CRD the way golden files store it: without the
// (empty) status a generated CRD carries.
func MarshalYAML(c *apiextensionsv1.CustomResourceDefinition) ([]byte, error) {
	j, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		return nil, err
	}
	delete(m, "status")
	j, err = json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return yaml.JSONToYAML(j)
}
