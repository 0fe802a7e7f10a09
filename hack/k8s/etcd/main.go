// Command etcd is etcd's own server main, built from the go.etcd.io/etcd
// modules (the version k8s.io/kubernetes pins) so no root or apt is needed.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
