// Package procstatus reads the memory lines of a Linux /proc status file,
// for the benchmarks' RSS figures (the engine's own, and a child's).
package procstatus

import (
	"fmt"
	"os"
	"strings"
)

// KB returns the value of one "Name: N kB" line of the status file at
// path (/proc/self/status, /proc/<pid>/status), and whether it was there.
func KB(path, name string) (int64, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(l, name); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err == nil {
				return kb, true
			}
		}
	}
	return 0, false
}
