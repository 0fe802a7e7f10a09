// Package prereq is the one place tests find what they need from outside Go:
// the API server binaries, kubectl, kro's controller and kro's own data (its
// CRDs, example graphs and chainsaw tests, from the kro module that
// `make assets` builds the controller from), and the kroscope binary, built
// once per test binary.
//
// A missing prerequisite skips the test with a message naming what is
// missing and the command that provides it; under CI=true it fails the test
// instead, so a CI run can never pass by skipping.
package prereq

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// BuildCommand is what a developer runs to get every binary and data folder.
const BuildCommand = "make assets"

// Marker starts every skip message this package writes, so a test run's
// output shows which skips were for a missing prerequisite (hack/testjson
// fails CI on any of them).
const Marker = "missing prerequisite:"

// Env names of the overrides.
const (
	// AssetsEnv is the folder of kube-apiserver, etcd and kubectl.
	AssetsEnv = "KUBEBUILDER_ASSETS"
	// KroDirEnv is a folder as hack/kro.sh makes one: controller, crds/,
	// examples/, chainsaw/.
	KroDirEnv = "KROSCOPE_KRO_DIR"
	// KroVersionEnv picks another kro version's folder (make test KRO_VERSION=...).
	KroVersionEnv = "KRO_VERSION"
	// K8sVersionEnv picks another Kubernetes minor (make test K8S_VERSION=1.35).
	K8sVersionEnv = "K8S_VERSION"
)

// K8sVersion is the kube-apiserver version the tests run: hack/k8s/go.mod's
// k8s.io/kubernetes requirement (kind's default minor), or with
// $K8S_VERSION (make test K8S_VERSION=1.35) the version
// hack/k8s/v1.<minor>.mod pins. Each is the one place its version is
// written; hack/assets.sh resolves $K8S_VERSION the same way.
func K8sVersion() string {
	pinned := PinnedK8sVersions()
	want := os.Getenv(K8sVersionEnv)
	if want == "" {
		return pinnedIn(filepath.Join(RepoRoot(), "hack", "k8s", "go.mod"))
	}
	v := strings.TrimPrefix(want, "v")
	if parts := strings.Split(v, "."); len(parts) >= 2 {
		if full, ok := pinned[parts[0]+"."+parts[1]]; ok && (len(parts) == 2 || full == "v"+v) {
			return full
		}
	}
	panic(fmt.Sprintf("%s=%s: hack/k8s pins %v", K8sVersionEnv, want, pinned))
}

// PinnedK8sVersions maps each minor hack/k8s pins ("1.37") to its version
// (v1.37.2): go.mod's and every v1.<minor>.mod's.
func PinnedK8sVersions() map[string]string {
	dir := filepath.Join(RepoRoot(), "hack", "k8s")
	files, _ := filepath.Glob(filepath.Join(dir, "v1.*.mod"))
	out := map[string]string{}
	for _, f := range append(files, filepath.Join(dir, "go.mod")) {
		v := pinnedIn(f)
		parts := strings.Split(strings.TrimPrefix(v, "v"), ".")
		out[parts[0]+"."+parts[1]] = v
	}
	return out
}

// pinnedIn is a module file's k8s.io/kubernetes version.
func pinnedIn(file string) string {
	b, err := os.ReadFile(file)
	if err != nil {
		panic(err.Error())
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "k8s.io/kubernetes" && strings.HasPrefix(f[1], "v1.") {
			return f[1]
		}
	}
	panic(file + " requires no k8s.io/kubernetes version")
}

// InCI reports whether the tests run in CI, where nothing may be skipped
// for a missing prerequisite.
func InCI() bool { return os.Getenv("CI") == "true" }

// Missing skips the test (or fails it under CI=true) for a prerequisite
// that is not there, saying what and how to get it.
func Missing(t testing.TB, what, how string) {
	t.Helper()
	msg := fmt.Sprintf("%s %s: %s", Marker, what, how)
	if InCI() {
		t.Fatal(msg + " (CI=true: a missing prerequisite fails)")
	}
	t.Skip(msg)
}

// RepoRoot is the repository's top folder.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// AssetsDir returns the folder holding kube-apiserver and etcd:
// $KUBEBUILDER_ASSETS when set, else <repo>/bin/k8s/<version>.
func AssetsDir() string {
	if d := os.Getenv(AssetsEnv); d != "" {
		return d
	}
	return filepath.Join(RepoRoot(), "bin", "k8s", K8sVersion())
}

// APIServer returns AssetsDir after checking that kube-apiserver and etcd
// are in it.
func APIServer(t testing.TB) string {
	t.Helper()
	dir := AssetsDir()
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if !executable(filepath.Join(dir, b)) {
			Missing(t, fmt.Sprintf("%s not found in %s", b, dir), "run `"+BuildCommand+"` (or set "+AssetsEnv+")")
		}
	}
	return dir
}

// Kubectl returns the kubectl that hack/assets.sh builds.
func Kubectl(t testing.TB) string {
	t.Helper()
	p := filepath.Join(AssetsDir(), "kubectl")
	if !executable(p) {
		Missing(t, "kubectl not found at "+p, "run `"+BuildCommand+"` (or set "+AssetsEnv+")")
	}
	return p
}

func executable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// KroVersion is the kro version the tests run: $KRO_VERSION, else the one
// line of hack/kro/VERSION (the one place it is written).
func KroVersion() string {
	if v := os.Getenv(KroVersionEnv); v != "" {
		return v
	}
	if d := os.Getenv(KroDirEnv); d != "" {
		return filepath.Base(filepath.Clean(d))
	}
	return PinnedKroVersion()
}

// PinnedKroVersion is hack/kro/VERSION: the kro version `make test` runs
// unless told otherwise, and the one golden files are kept for.
func PinnedKroVersion() string {
	b, err := os.ReadFile(filepath.Join(RepoRoot(), "hack", "kro", "VERSION"))
	if err != nil {
		panic("hack/kro/VERSION: " + err.Error())
	}
	return strings.TrimSpace(string(b))
}

// KroDir is the folder hack/kro.sh fills for KroVersion.
func KroDir() string {
	if d := os.Getenv(KroDirEnv); d != "" {
		return d
	}
	return filepath.Join(RepoRoot(), "bin", "kro", KroVersion())
}

func kroMissing(t testing.TB, what string) {
	t.Helper()
	Missing(t, fmt.Sprintf("kro %s's %s not found in %s", KroVersion(), what, KroDir()),
		"run `"+BuildCommand+"` (or `bash hack/kro.sh "+KroVersion()+"`; "+KroDirEnv+" points elsewhere)")
}

// KroController returns kro's controller binary.
func KroController(t testing.TB) string {
	t.Helper()
	p := filepath.Join(KroDir(), "controller")
	if !executable(p) {
		kroMissing(t, "controller")
	}
	return p
}

// KroData returns one of the data folders hack/kro.sh copies from kro's
// module: "crds", "examples" or "chainsaw".
func KroData(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(KroDir(), name)
	if !isDir(p) {
		kroMissing(t, name)
	}
	return p
}

// PlatformMarker starts the message of a skip for something this platform
// cannot do at all (no mount namespaces, not root): those skip in CI too,
// and docs/testing.md lists them.
const PlatformMarker = "platform lacks:"

// Platform skips the test, in CI too, for something the platform cannot do.
func Platform(t testing.TB, why string) {
	t.Helper()
	t.Skip(PlatformMarker + " " + why)
}
