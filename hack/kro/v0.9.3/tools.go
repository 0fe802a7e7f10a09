//go:build tools

// Package kro pins kro's controller (a command, never imported by kroscope)
// so hack/kro.sh can build it from the Go module proxy at this exact
// version, with the checksums in go.sum.
package kro

import _ "github.com/kubernetes-sigs/kro/cmd/controller"
