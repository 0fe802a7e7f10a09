// Package kroexamples finds kro's published example graphs, which tests read
// in place (they are never copied into this repository): the folder
// ../shared/testdata/kro-examples beside the repository, or $KROSCOPE_KRO_EXAMPLES.
package kroexamples

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/kroscope/kroscope/test/shareddata"
)

// Env overrides where the examples are read from.
const Env = "KROSCOPE_KRO_EXAMPLES"

// Dir returns the folder, or "" when it does not exist.
func Dir() string { return shareddata.Dir("kro-examples", Env) }

// Require returns the folder, skipping the test with a message when it is
// absent (as in a clone without ../shared).
func Require(t testing.TB) string {
	t.Helper()
	return shareddata.Require(t, "kro-examples", Env, "kro examples")
}

// RGDFiles returns every example's graph file (rg.yaml or rgd.yaml, not the
// *-assert.yaml expectations), sorted; it skips like Require and fails when
// the folder holds none.
func RGDFiles(t testing.TB) []string {
	t.Helper()
	dir := Require(t)
	var files []string
	for _, pat := range []string{"*/rg.yaml", "*/rgd.yaml"} {
		m, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatalf("no rg.yaml/rgd.yaml under %s", dir)
	}
	slices.Sort(files)
	return files
}
