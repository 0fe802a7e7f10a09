package source

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/test/graphs"
)

var good = graphs.RGD("good", "Good", "spec:\n  name: string", graphs.ConfigMap("cm", "${schema.spec.name}", ""))

func TestFilesReportsBadFilesAndKeepsGoodOnes(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "good.yaml"), []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "broken.yaml"), []byte("kind: [unclosed"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.yaml")
	ups := Files(graph.Loader{}, []string{dir, missing})
	var names []string
	var errs []string
	for _, u := range ups {
		if u.Err != nil {
			errs = append(errs, u.Err.Error())
			continue
		}
		names = append(names, u.Name)
		if u.RGD == nil || u.Source != filepath.Join(dir, "good.yaml") {
			t.Errorf("good definition: %+v", u)
		}
	}
	if len(names) != 1 || names[0] != "good" {
		t.Errorf("definitions = %v, want [good]", names)
	}
	joined := strings.Join(errs, "\n")
	if !strings.Contains(joined, "broken.yaml") || !strings.Contains(joined, "missing.yaml") {
		t.Errorf("errors do not name both bad files:\n%s", joined)
	}
}

func TestNoPathsNoUpdates(t *testing.T) {
	if ups := Files(graph.Loader{}, nil); len(ups) != 0 {
		t.Fatalf("got %v", ups)
	}
}
