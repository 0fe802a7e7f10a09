package tui

import (
	"fmt"
	"strings"

	"github.com/kroscope/kroscope/engine/state"
)

// debugLine is the header line the debug overlay (ctrl+g) adds: the
// process's memory and the work queue, as the engine last published them
// (the UI reads them from the snapshot; it never measures anything itself).
func debugLine(c *common, s *state.Snapshot, w int) string {
	e := s.Engine
	parts := []string{"debug", "heap " + mib(e.HeapInUse)}
	if e.RSS > 0 {
		parts = append(parts, "rss "+mib(e.RSS))
	}
	parts = append(parts,
		fmt.Sprintf("queue %d", e.QueueDepth),
		fmt.Sprintf("in flight %d/%d", e.BusyWorkers, e.Workers),
		fmt.Sprintf("%d instances", len(s.Instances)))
	th := c.th
	return th.Dim.Render(fit(strings.Join(parts, " "+th.G.Sep+" "), w, th.G.Ellipsis))
}

// mib renders bytes as whole MiB.
func mib(b uint64) string { return fmt.Sprintf("%d MiB", (b+(1<<19))>>20) }
