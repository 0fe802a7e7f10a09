package tui

import (
	"slices"
	"strings"

	"github.com/kroscope/kroscope/engine/state"
)

// instanceLogs is what the Logs tab shows for an instance: its own log
// (each reconcile's decisions, its failed API calls) and the engine's lines
// that name it, in time order.
func instanceLogs(in *state.Instance, global []state.LogLine) []state.LogLine {
	out := append([]state.LogLine(nil), in.Log...)
	for _, l := range global {
		if strings.Contains(l.Message, in.Key.Name) || strings.Contains(l.KV, in.Key.Name) {
			out = append(out, l)
		}
	}
	slices.SortStableFunc(out, func(a, b state.LogLine) int { return a.At.Compare(b.At) })
	return out
}
