package celparity

import (
	"os"
	"strings"
	"testing"
)

// TestKroVersionIsThePinnedOne: this module's kro is hack/kro/VERSION's, the
// version whose controller and examples the other tests run, so the CEL
// compared is that kro's.
func TestKroVersionIsThePinnedOne(t *testing.T) {
	b, err := os.ReadFile("../kro/VERSION")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSpace(string(b))
	mod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(mod), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[len(f)-2] == "github.com/kubernetes-sigs/kro" {
			if f[len(f)-1] != want {
				t.Errorf("hack/celparity requires kro %s, hack/kro/VERSION says %s: change its go.mod to match", f[len(f)-1], want)
			}
			return
		}
	}
	t.Error("hack/celparity/go.mod does not require github.com/kubernetes-sigs/kro")
}
