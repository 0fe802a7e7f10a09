// Package onewriter tests, on a real API server that counts every write
// with who sent it (its audit log), that one kroscope at a time writes a
// cluster's instances: a holder paused past its Lease sends nothing once
// the Lease moved (the fence), and a kroscope under another Lease gives way
// to the one already writing (docs/writers.md).
package onewriter

import (
	"os"
	"testing"

	"github.com/kroscope/kroscope/test/envtest"
)

func TestMain(m *testing.M) {
	envtest.EnableAudit()
	os.Exit(envtest.Run(m))
}
