// Package e2e holds kroscope's end-to-end tests. They run against a real
// kube-apiserver and etcd (see test/envtest); without the binaries they skip
// locally and fail in CI.
package e2e

import (
	"os"
	"testing"

	"github.com/kroscope/kroscope/test/envtest"
)

func TestMain(m *testing.M) { os.Exit(envtest.Run(m)) }
