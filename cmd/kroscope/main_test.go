package main

import (
	"os"
	"testing"

	"github.com/kroscope/kroscope/test/envtest"
)

// TestMain stops the test API server the Lease tests start and removes
// the kroscope binary the tmux tests build: without it each `go test` of
// this package left a kube-apiserver, an etcd and 120 MB in /tmp behind.
func TestMain(m *testing.M) { os.Exit(envtest.Run(m)) }
