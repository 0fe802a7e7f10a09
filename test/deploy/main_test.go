// Package deploy tests the manifests under deploy/ against a real API
// server: kubectl's server-side dry run of the kustomization, the
// ServiceAccount's RBAC (the reconciler run with its rights only), and
// `kroscope run` as the Deployment runs it, in a Pod-like sandbox.
package deploy

import (
	"os"
	"testing"

	"github.com/kroscope/kroscope/test/envtest"
)

func TestMain(m *testing.M) { os.Exit(envtest.Run(m)) }
