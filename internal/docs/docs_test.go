package docs

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestLinksValid: every relative link and #anchor in README.md and
// docs/*.md resolves, and every function a code-map table names exists.
func TestLinksValid(t *testing.T) {
	root := filepath.Join("..", "..")
	pages := []string{"README.md"}
	mds, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mds {
		pages = append(pages, "docs/"+filepath.Base(m))
	}
	if !slices.Contains(pages, "docs/architecture.md") {
		t.Fatalf("docs/architecture.md is missing (pages: %v)", pages)
	}
	for _, p := range newChecker(root).check(pages...) {
		t.Error(p)
	}
}

// TestCheckerFindsProblems: the checker fails on each kind of broken link
// and passes what GitHub resolves.
func TestCheckerFindsProblems(t *testing.T) {
	root := t.TempDir()
	write := func(rel, s string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("pkg/a.go", "package pkg\n\ntype T struct{}\n\nfunc (t *T) Do() {}\n\nfunc Free() {}\n\nconst Limit = 1\n")
	write("img.png", "")
	write("docs/other.md", "# Other\n\n## The binary's pages\n\n## Step `one`: go\n\n## Twice\n\n## Twice\n\n```sh\n# not a heading\n```\n")
	write("README.md", `# Top

![pic](img.png) [ok](docs/other.md#the-binarys-pages) [ok](docs/other.md#step-one-go)
[ok](docs/other.md#twice-1) [ok](#top) [web](https://example.com/x#y) `+"`[code](missing.md)`"+`
[line](pkg/a.go#L3) [dir](pkg/)
[gone](docs/missing.md)
[noanchor](docs/other.md#nope)
[fenced](docs/other.md#not-a-heading)
[self](#nope)
[out](../elsewhere.md)
[third](docs/other.md#twice-2)

| step | where | functions |
|---|---|---|
| 1 | [pkg/a.go](pkg/a.go) | `+"`T.Do`, `Free`, `T`, `Limit`"+` |
| 2 | [pkg/a.go](pkg/a.go) | `+"`T.Gone`, `Missing`"+` |
| 3 | [pkg/a.go](pkg/a.go) | prose, not names |
`)
	got := newChecker(root).check("README.md")
	want := []string{
		"README.md:6: docs/missing.md: no such file docs/missing.md",
		"README.md:7: docs/other.md#nope: no heading in docs/other.md has the anchor #nope",
		"README.md:8: docs/other.md#not-a-heading: no heading in docs/other.md has the anchor #not-a-heading",
		"README.md:9: #nope: no heading in README.md has the anchor #nope",
		"README.md:10: ../elsewhere.md: points outside the repository",
		"README.md:11: docs/other.md#twice-2: no heading in docs/other.md has the anchor #twice-2",
		"README.md:16: pkg/a.go declares no T.Gone",
		"README.md:16: pkg/a.go declares no Missing",
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%q\nwant:\n%q", got, want)
	}
}

func TestSlug(t *testing.T) {
	for h, want := range map[string]string{
		"Detection: kroscope never fights kro":                      "detection-kroscope-never-fights-kro",
		"The ResourceGraphDefinition's status and breaking changes": "the-resourcegraphdefinitions-status-and-breaking-changes",
		"kro's real controller in the tests":                        "kros-real-controller-in-the-tests",
		"Where the memory went, and what changed":                   "where-the-memory-went-and-what-changed",
		"`kroscope demo` in [a link](x.md)":                         "kroscope-demo-in-a-link",
		"WAITING_FOR_READINESS":                                     "waiting_for_readiness",
		"Who may write, when":                                       "who-may-write-when",
	} {
		if got := slug(h); got != want {
			t.Errorf("slug(%q) = %q, want %q", h, got, want)
		}
	}
}
