// Package shareddata finds the folders of ../shared/testdata beside the
// repository (kro's CRDs and examples), which tests read in place and never
// copy into this repository. An environment variable can point elsewhere.
package shareddata

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Dir returns the folder named by env, or else ../shared/testdata/<name>
// beside the repository; "" when it does not exist.
func Dir(name, env string) string {
	dir := os.Getenv(env)
	if dir == "" {
		_, file, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "testdata", name)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return ""
	}
	return dir
}

// Require returns Dir(name, env), skipping the test with a message saying
// what is missing and how to provide it when it is absent (as in a clone
// without ../shared).
func Require(t testing.TB, name, env, what string) string {
	t.Helper()
	dir := Dir(name, env)
	if dir == "" {
		t.Skipf("%s not found: set %s or check out ../shared/testdata/%s beside the repository", what, env, name)
	}
	return dir
}
