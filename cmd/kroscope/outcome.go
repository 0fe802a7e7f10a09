package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kroscope/kroscope/reconciler/graph"
)

// loadOutcome is what `validate` and `graph` found: definitions that built,
// problems with definitions (each printed already), and paths that could
// not be read.
type loadOutcome struct {
	paths      []string
	valid      int
	invalid    int
	unreadable int
}

// result is the one decision of how `validate` and `graph` end (see
// docs/validate.md, "Exit status"): any invalid definition, or none found at
// all (an instances file, say), is a validation failure (exit 2); otherwise
// a path that could not be read is an I/O failure (exit 1), named above; a
// path that could not be read is never counted as a definition.
func (o loadOutcome) result() error {
	switch {
	case o.invalid > 0:
		return &invalidError{invalid: o.invalid, total: o.valid + o.invalid, unreadable: o.unreadable}
	case o.unreadable > 0:
		return fmt.Errorf("%d of the paths given could not be read", o.unreadable)
	case o.valid == 0:
		return &invalidError{none: strings.Join(o.paths, ", ")}
	}
	return nil
}

// isReadError tells a path that could not be read from a problem with a
// definition.
func isReadError(err error) bool {
	var re *graph.ReadError
	return errors.As(err, &re)
}
