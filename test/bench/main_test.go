//go:build bench

// Package bench measures the engine on the test API server. It is not part
// of `make test`; run it with
//
//	go test -tags bench -run '^$' -bench . -benchtime 1x -timeout 30m ./test/bench/
package bench

import (
	"os"
	"testing"

	"github.com/kroscope/kroscope/test/envtest"
)

func TestMain(m *testing.M) { os.Exit(envtest.Run(m)) }
