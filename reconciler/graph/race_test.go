//go:build race

package graph

// raceEnabled: the race detector changes how much the runtime allocates for
// the same work (string concatenation among it), so allocation bounds
// measured without it are widened under it.
const raceEnabled = true
