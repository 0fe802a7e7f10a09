package graph

import "testing"

// tryBuild parses src, one ResourceGraphDefinition (a parse error fails
// the test), and returns what building it with opts returns.
func tryBuild(t testing.TB, src string, opts ...Option) (*Graph, error) {
	t.Helper()
	rgds, err := Parse([]byte(src), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(rgds) != 1 {
		t.Fatalf("parsed %d definitions, want 1", len(rgds))
	}
	return NewBuilder(opts...).Build(rgds[0])
}

// buildOne parses and builds src with opts; either error fails the test.
func buildOne(t testing.TB, src string, opts ...Option) *Graph {
	t.Helper()
	g, err := tryBuild(t, src, opts...)
	if err != nil {
		t.Fatalf("build:\n%v", err)
	}
	return g
}
