// Package kroexamples lists kro's published example graphs, read in place
// from the kro module the tests build kro's controller from (hack/kro.sh
// copies its examples/ and test/e2e/chainsaw/ into bin/kro/<version>/; see
// package prereq): every graph under examples/kubernetes (the examples that
// need no other operator's CRDs) and every chainsaw test's graph.
// $KROSCOPE_KRO_EXAMPLES names another folder to run instead; every rg.yaml
// or rgd.yaml under it is an example.
package kroexamples

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kroscope/kroscope/test/prereq"
)

// Env overrides where the examples are read from.
const Env = "KROSCOPE_KRO_EXAMPLES"

// Elsewhere reports whether the examples come from $KROSCOPE_KRO_EXAMPLES
// rather than kro's module: such folders may hold graphs kro or kroscope
// refuse, or no instance, which the harnesses then report instead of
// failing on.
func Elsewhere() bool { return os.Getenv(Env) != "" }

// Roots returns the folders examples are found under.
func Roots(t testing.TB) []string {
	t.Helper()
	if d := os.Getenv(Env); d != "" {
		return []string{d}
	}
	return []string{
		filepath.Join(prereq.KroData(t, "examples"), "kubernetes"),
		prereq.KroData(t, "chainsaw"),
	}
}

// RGDFiles returns every example's graph file (rg.yaml or rgd.yaml, never
// the *-assert.yaml expectations), sorted by example name; it fails the test
// when there are none.
func RGDFiles(t testing.TB) []string {
	t.Helper()
	var files []string
	for _, root := range Roots(t) {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && (d.Name() == "rg.yaml" || d.Name() == "rgd.yaml") {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("listing kro's examples: %v", err)
		}
	}
	if len(files) == 0 {
		t.Fatalf("no rg.yaml/rgd.yaml under %v", Roots(t))
	}
	slices.SortFunc(files, func(a, b string) int { return strings.Compare(Name(a), Name(b)) })
	return files
}

// Name is an example's name: its folder's.
func Name(rgdFile string) string { return filepath.Base(filepath.Dir(rgdFile)) }

// SetupFiles are the files a chainsaw test applies besides its graph, its
// instances and kro's own RBAC (a CRD the graph's resources need, an object
// an externalRef reads), in the test's order; none for other examples.
func SetupFiles(t testing.TB, dir string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "chainsaw-test.yaml"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var test struct {
		Spec struct {
			Steps []struct {
				Try []struct {
					Apply *struct {
						File string `json:"file"`
					} `json:"apply"`
				} `json:"try"`
			} `json:"steps"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &test); err != nil {
		t.Fatalf("%s/chainsaw-test.yaml: %v", dir, err)
	}
	var out []string
	for _, step := range test.Spec.Steps {
		for _, op := range step.Try {
			if op.Apply == nil || !isSetup(op.Apply.File) || slices.Contains(out, op.Apply.File) {
				continue
			}
			out = append(out, op.Apply.File)
		}
	}
	for i, f := range out {
		out[i] = filepath.Join(dir, f)
	}
	return out
}

func isSetup(file string) bool {
	switch {
	case file == "cluster-role.yaml", file == "rgd.yaml", file == "rg.yaml":
		return false
	case strings.Contains(file, "instance"), strings.HasSuffix(file, "-update.yaml"):
		return false
	}
	return true
}
