package demo

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kroscope/kroscope/plan"
	"github.com/kroscope/kroscope/test/prereq"
)

// The demo's :plan shows what the change does (#38: every change was
// "dry run is not supported by the demo"): docs/plan.md's webapp-v2 over
// the demo's shop and blog gives the diffs the documented plan on a real
// API server gives.
func TestPlanOnTheDemo(t *testing.T) {
	_, e := startDemo(t, 2, "webapp")
	watchStates(t, e, "the start", func() bool { return countActive(e) == 2 })

	plans, err := e.Plan(t.Context(), filepath.Join(prereq.RepoRoot(), "test", "plan", "testdata", "webapp-v2.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := plan.Text(&b, plans); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{
		"~ ConfigMap demo/blog-config (config)",
		`+ data.MOTD: "hello from kroscope (v2)"`,
		"+ ConfigMap demo/shop-banner (banner)",
		"- Ingress demo/shop (ingress)",
		"spec.replicas: maximum lowered from 20 to 2",
		"Plan: 2 to create, 2 to change, 1 to prune, across 2 instances; 2 would fail.",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the plan lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "dry run") {
		t.Errorf("the plan mentions dry runs:\n%s", text)
	}
}
