// Package examples embeds the example graphs (each directory holds an
// rgd.yaml, an instances.yaml and a one-line README.md) so that
// `kroscope demo` runs them from anywhere, with no files on disk.
package examples

import (
	"embed"
	"io/fs"
	"slices"
	"sort"
)

//go:embed */rgd.yaml */instances.yaml */README.md
var files embed.FS

// FS returns the examples: NAME/rgd.yaml, NAME/instances.yaml, NAME/README.md.
func FS() fs.FS { return files }

// OptIn are the examples a demo loads only when named (--examples): they
// show a limit at work and would make every default run end in FAILED.
var OptIn = []string{"runaway"}

// Default returns the examples a demo loads when none are named: names
// without OptIn, in their order.
func Default(names []string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(OptIn, n) {
			out = append(out, n)
		}
	}
	return out
}

// Names returns the example names (directories), sorted.
func Names() []string {
	entries, _ := fs.ReadDir(files, ".") // the embedded root always reads
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}
