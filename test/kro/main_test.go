// Package kro runs kroscope beside kro's real controller (built by
// hack/kro.sh, started by test/krocontroller) on one test API server: the
// proof that kroscope observes what kro does, generates the CRDs kro
// generates, and reads what kro writes. The tests skip when the kro binary,
// kro's CRDs or the examples in ../shared are missing.
package kro

import (
	"os"
	"testing"

	"github.com/kroscope/kroscope/test/envtest"
)

func TestMain(m *testing.M) { os.Exit(envtest.Run(m)) }
