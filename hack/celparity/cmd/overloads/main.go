// Command overloads prints every CEL function overload kro declares, in
// the format of reconciler/graph/testdata/kro-cel-functions.txt. From
// hack/celparity (`make kro-overloads` does it):
//
//	go run ./cmd/overloads > ../../reconciler/graph/testdata/kro-cel-functions.txt
package main

import (
	"fmt"
	"os"

	"github.com/kroscope/kroscope/hack/celparity"
)

func main() {
	if err := celparity.WriteOverloads(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
