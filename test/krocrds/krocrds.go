// Package krocrds reads the CustomResourceDefinitions kro installs (its
// ResourceGraphDefinition and GraphRevision CRDs) from the kro module the
// tests build kro's controller from (helm/crds, copied by hack/kro.sh into
// bin/kro/<version>/crds; see package prereq). Tests that store graphs in a cluster install these,
// not a hand-written stand-in, so the graphs come back defaulted and pruned
// exactly as in a cluster that runs kro.
package krocrds

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kroscope/kroscope/test/prereq"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// RGDFile is the ResourceGraphDefinition CRD's file name in the folder.
const RGDFile = "kro.run_resourcegraphdefinitions.yaml"

// GraphRevisionFile is the GraphRevision CRD's file name in the folder.
const GraphRevisionFile = "internal.kro.run_graphrevisions.yaml"

// Dir returns the folder, whether or not it exists (hack/devcluster's default).
func Dir() string { return filepath.Join(prereq.KroDir(), "crds") }

// Require returns the folder, skipping the test (failing it under CI=true)
// with a message when it is absent.
func Require(t testing.TB) string {
	t.Helper()
	return prereq.KroData(t, "crds")
}

// RGD returns kro's ResourceGraphDefinition CRD, skipping like Require.
func RGD(t testing.TB) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	path := filepath.Join(Require(t), RGDFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading kro's RGD CRD: %v", err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &crd); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if crd.Name != "resourcegraphdefinitions.kro.run" {
		t.Fatalf("%s holds CRD %q, not resourcegraphdefinitions.kro.run", path, crd.Name)
	}
	return &crd
}

// All returns both of kro's CRDs (ResourceGraphDefinition and
// GraphRevision), skipping like Require.
func All(t testing.TB) []*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	dir := Require(t)
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, f := range []string{RGDFile, GraphRevisionFile} {
		path := filepath.Join(dir, f)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("reading kro's CRD: %v", err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, crd)
	}
	return out
}
