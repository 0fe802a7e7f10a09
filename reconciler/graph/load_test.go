package graph

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kroscope/kroscope/test/graphs"
)

var minimalRGD = graphs.RGD("%s", "Thing", "spec:\n  name: string", graphs.ConfigMap("config", "${schema.spec.name}", ""))

func rgdYAML(kind, name string) string {
	return strings.Replace(strings.Replace(minimalRGD, "kind: ResourceGraphDefinition", "kind: "+kind, 1), "%s", name, 1)
}

func TestLoadFilesDirectoriesAndDocuments(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "nested", "deeper")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	multi := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: skipped\n---\n" + rgdYAML(Kind, "one") + "---\n" + rgdYAML(LegacyKind, "legacy")
	for path, content := range map[string]string{
		filepath.Join(dir, "a.yaml"):    multi,
		filepath.Join(sub, "b.yml"):     rgdYAML(Kind, "two"),
		filepath.Join(sub, "notes.txt"): "not yaml: [",
	} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rgds, err := LoadFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rgds {
		got = append(got, r.Name+"@"+filepath.Base(r.Source))
	}
	want := "one@a.yaml#1 legacy@a.yaml#2 two@b.yml"
	if strings.Join(got, " ") != want {
		t.Fatalf("loaded %v, want %s", got, want)
	}
	if _, err := NewBuilder().Build(rgds[1]); err != nil {
		t.Fatalf("legacy kind: %v", err)
	}
}

func TestLoadErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: kro.run/v1alpha1\nkind: ResourceGraphDefinition\nmetadata: [unclosed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadFiles(bad, filepath.Join(dir, "missing.yaml"))
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "missing.yaml") {
		t.Fatalf("err = %v, want both files named", err)
	}
}

func TestParseUnknownFieldsAndTypes(t *testing.T) {
	src := strings.Replace(rgdYAML(Kind, "typo"), "  - id: config\n", "  - id: config\n    readyWhen: yes-please\n    extra: 1\n", 1)
	_, err := Parse([]byte(src), "typo.yaml")
	for _, want := range []string{
		"typo (typo.yaml): spec.resources[0].extra: unknown field \"extra\"",
		"spec.resources[0].readyWhen: must be a list of strings, got string",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want %q", err, want)
		}
	}
}

func TestFromUnstructured(t *testing.T) {
	obj, err := decodeYAML([]byte(rgdYAML(Kind, "cluster-one")))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetGeneration(7)
	rgd, err := FromUnstructured(u)
	if err != nil {
		t.Fatal(err)
	}
	if rgd.Name != "cluster-one" || rgd.Generation != 7 || rgd.Source != "cluster" || rgd.Spec.Resources[0].ID != "config" {
		t.Fatalf("got %+v", rgd)
	}
	// The definition does not alias the object.
	rgd.Spec.Resources[0].Template["kind"] = "Secret"
	if u.Object["spec"].(map[string]any)["resources"].([]any)[0].(map[string]any)["template"].(map[string]any)["kind"] != "ConfigMap" {
		t.Fatal("FromUnstructured shares the template with the object")
	}
	u.SetKind("Deployment")
	if _, err := FromUnstructured(u); err == nil {
		t.Fatal("a Deployment was read as a definition")
	}
}
