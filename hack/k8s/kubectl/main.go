// Command kubectl is the real kubectl, built from the Kubernetes modules at
// the API server's version so the deploy/ tests (kubectl apply -k
// --dry-run=server) need nothing outside the Go module proxy.
// hack/assets.sh builds it into bin/k8s/<version>/.
package main

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
)

func main() {
	cli.RunNoErrOutput(cmd.NewDefaultKubectlCommand())
}
