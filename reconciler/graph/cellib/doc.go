// Package cellib holds the CEL functions kro adds to its expression
// environment, written for kroscope so a graph evaluates to the same values
// under either tool: random.seededString/seededInt, hash.*, json.*,
// map.merge/deepMerge, lists.setAtIndex/insertAtIndex/removeAtIndex, omit()
// and the runtime variable of status conditions.
//
// Outputs (strings, encodings, error cases) follow kro v0.9.4; each file's
// tests list kro's documented results.
package cellib

import "github.com/google/cel-go/cel"

// lib adapts a list of declarations to cel.Library.
type lib struct {
	name string
	opts []cel.EnvOption
}

func (l lib) LibraryName() string                 { return l.name }
func (l lib) CompileOptions() []cel.EnvOption     { return l.opts }
func (l lib) ProgramOptions() []cel.ProgramOption { return nil }
func library(name string, opts ...cel.EnvOption) cel.EnvOption {
	return cel.Lib(lib{name: name, opts: opts})
}
