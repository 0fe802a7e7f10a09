// Command kube-apiserver is the real Kubernetes API server, built from the
// k8s.io/kubernetes module so tests never need a binary from outside the Go
// module proxy. hack/assets.sh builds it into bin/k8s/<version>/.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
