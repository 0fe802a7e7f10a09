// Package procstatus reads the memory figures of a Linux process from
// /proc (its status and statm files), for the benchmarks' RSS figures (the
// engine's own, and a child's).
package procstatus

import (
	"fmt"
	"os"
	"strconv"
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

// RSS returns the resident memory of the statm file at path
// (/proc/self/statm) in KiB, split into anonymous and file-backed, as
// Statm reads it.
func RSS(path string) (anon, file int64, ok bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, false
	}
	return Statm(data)
}

// Statm reads the contents of a statm file: resident memory in KiB, split
// into anonymous and file-backed (shared memory counts as file-backed; a Go
// process has none). One short line of numbers, so a sampler can read it
// every few milliseconds for little: reading status twice per sample was
// 2 % of the engine's CPU in the chain benchmark.
func Statm(data []byte) (anon, file int64, ok bool) {
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return 0, 0, false
	}
	resident, err1 := strconv.ParseInt(f[1], 10, 64)
	shared, err2 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil || shared > resident {
		return 0, 0, false
	}
	kb := int64(os.Getpagesize() / 1024)
	return (resident - shared) * kb, shared * kb, true
}
