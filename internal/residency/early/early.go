// Package early releases the binary's pages (package residency) while the
// process initialises, for kroscope's long-running commands. Import it for
// its init: package initialisation touches code in almost every 2 MiB of
// the binary, and released this early those folios never all count at once.
// Its init runs before most of kroscope's dependencies initialise (it needs
// only the standard library and golang.org/x/sys).
package early

import (
	"os"

	"github.com/kroscope/kroscope/internal/residency"
)

// shortLived are kroscope's subcommands and flags that exit at once: the
// page reads after a release (about 0.2 s) would only slow them, and a shell
// runs __complete on every tab. Seen anywhere in the arguments they skip
// the release; a namespace with one of these names merely skips it too.
var shortLived = map[string]bool{
	"version": true, "completion": true, "__complete": true, "__completeNoDesc": true,
	"help": true, "-h": true, "--help": true, "validate": true, "graph": true, "config": true,
}

func init() {
	if releases(os.Args[1:]) {
		residency.Release()
	}
}

// releases reports whether a process run with args releases at start.
func releases(args []string) bool {
	for _, a := range args {
		if shortLived[a] {
			return false
		}
	}
	return true
}
