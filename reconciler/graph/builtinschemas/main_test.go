package builtinschemas_test

import (
	"os"
	"testing"

	"github.com/kroscope/kroscope/test/envtest"
)

// TestMain stops the test API server TestEmbeddedMatchesServer starts.
func TestMain(m *testing.M) { os.Exit(envtest.Run(m)) }
