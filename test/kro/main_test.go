// Package kro runs kroscope beside kro's real controller (built by
// hack/kro.sh, started by test/krocontroller) on one test API server: the
// proof that kroscope observes what kro does, generates the CRDs kro
// generates, and reads what kro writes. kro's controller, CRDs and examples
// all come from one kro module (hack/kro.sh); when they are missing the tests
// skip, or fail under CI=true (package test/prereq).
package kro

import (
	"os"
	"testing"

	"github.com/kroscope/kroscope/test/envtest"
)

func TestMain(m *testing.M) { os.Exit(envtest.Run(m)) }
