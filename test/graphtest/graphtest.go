// Package graphtest builds, as kroscope does, the graphs tests write (by
// hand or with test/graphs). It is apart from test/graphs because the
// tests of reconciler/graph use that one, and this one imports it.
package graphtest

import (
	"testing"

	"github.com/kroscope/kroscope/reconciler/graph"
)

// Build parses doc as the file named file and builds its first graph,
// failing the test on an error in either.
func Build(t testing.TB, doc, file string) *graph.Graph {
	t.Helper()
	rgds, err := graph.Parse([]byte(doc), file)
	if err != nil {
		t.Fatal(err)
	}
	g, err := graph.NewBuilder().Build(rgds[0])
	if err != nil {
		t.Fatal(err)
	}
	return g
}
