//go:build generate

package builtinschemas

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGenerate writes schemas/<minor>.json.gz for every Kubernetes version
// hack/k8s pins (go.mod and v1.<minor>.mod), from the OpenAPI v3 documents
// each release publishes in its k8s.io/kubernetes module
// (api/openapi-spec/v3, what its kube-apiserver serves: TestEmbeddedMatchesServer
// checks that against the test API server), with components.schemas only
// and no descriptions. Run by `make builtin-schemas`.
func TestGenerate(t *testing.T) {
	versions := pinnedVersions(t)
	old, _ := filepath.Glob(filepath.Join(Dir, "*.json.gz"))
	for _, f := range old {
		os.Remove(f)
	}
	for _, v := range versions {
		docs := Documents{KubernetesVersion: v, Paths: map[string]json.RawMessage{}}
		files, err := filepath.Glob(filepath.Join(moduleDir(t, v), "api", "openapi-spec", "v3", "*_openapi.json"))
		if err != nil || len(files) == 0 {
			t.Fatalf("k8s.io/kubernetes@%s: no api/openapi-spec/v3 (%v)", v, err)
		}
		for _, f := range files {
			p, ok := openAPIPath(filepath.Base(f))
			if !ok {
				continue
			}
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			b, err := schemasOnly(raw)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			docs.Paths[p] = b
		}
		b, err := json.Marshal(docs)
		if err != nil {
			t.Fatal(err)
		}
		var gz bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
		zw.Write(b)
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		minor := strings.Join(strings.Split(strings.TrimPrefix(v, "v"), ".")[:2], ".")
		if err := os.WriteFile(filepath.Join(Dir, minor+".json.gz"), gz.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s/%s.json.gz: Kubernetes %s, %d GroupVersions, %d bytes (%d unzipped)", Dir, minor, v, len(docs.Paths), gz.Len(), len(b))
	}
}

// pinnedVersions are the k8s.io/kubernetes versions of hack/k8s's module
// files.
func pinnedVersions(t *testing.T) []string {
	files, _ := filepath.Glob("../../../hack/k8s/v*.mod")
	files = append(files, "../../../hack/k8s/go.mod")
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if fs := strings.Fields(line); len(fs) >= 2 && fs[0] == "k8s.io/kubernetes" && strings.HasPrefix(fs[1], "v1.") {
				out = append(out, fs[1])
				break
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("hack/k8s pins no k8s.io/kubernetes version")
	}
	return out
}

// moduleDir downloads k8s.io/kubernetes@v from the module proxy (into the
// module cache) and returns its folder.
func moduleDir(t *testing.T, v string) string {
	cmd := exec.Command("go", "mod", "download", "-json", "k8s.io/kubernetes@"+v)
	cmd.Dir = t.TempDir() // outside any module: nothing's go.mod changes
	cmd.Env = append(os.Environ(), "GOFLAGS=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod download k8s.io/kubernetes@%s: %v", v, err)
	}
	var m struct{ Dir string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		t.Fatalf("go mod download k8s.io/kubernetes@%s: %v %s", v, err, out)
	}
	return m.Dir
}

// openAPIPath maps a spec file name (apis__apps__v1_openapi.json) to its
// OpenAPI v3 path (apis/apps/v1); the group lists (apis__apps_openapi.json)
// and the root are not GroupVersions.
func openAPIPath(name string) (string, bool) {
	parts := strings.Split(strings.TrimSuffix(name, "_openapi.json"), "__")
	switch {
	case len(parts) == 2 && parts[0] == "api", len(parts) == 3 && parts[0] == "apis":
		return strings.Join(parts, "/"), true
	}
	return "", false
}
