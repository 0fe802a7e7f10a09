package crd

import (
	"strings"

	"github.com/gobuffalo/flect"
)

// Plural returns the lower-case plural resource name of a kind, exactly as
// kro derives it (flect on the lower-cased kind: Person → people, Policy →
// policies), so that kroscope looks for the CRD kro would have created.
func Plural(kind string) string {
	if kind == "" {
		return ""
	}
	return flect.Pluralize(strings.ToLower(kind))
}
