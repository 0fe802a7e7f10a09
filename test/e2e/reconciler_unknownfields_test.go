package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/test/envtest"
)

// kroChainsaw is the folder of kro v0.9.4's chainsaw tests, read in place
// ($KROSCOPE_KRO_CHAINSAW, else the kro module in the Go module cache).
func kroChainsaw(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("KROSCOPE_KRO_CHAINSAW")
	if dir == "" {
		dir = "/root/go/pkg/mod/github.com/kubernetes-sigs/kro@v0.9.4/test/e2e/chainsaw"
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("kro's chainsaw tests (set KROSCOPE_KRO_CHAINSAW): %v", err)
	}
	return dir
}

// TestReconcilerUnknownFields runs kro's check-unknown-fields chainsaw test
// in reconcile mode: a resource whose CRD keeps unknown fields in a field
// listing no properties is read as stored, so the ConfigMap built from
// ${example.spec.config.foo} is created and the instance becomes ACTIVE.
func TestReconcilerUnknownFields(t *testing.T) {
	dir := filepath.Join(kroChainsaw(t), "check-unknown-fields")
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(read("allow-unknown-crd.yaml"), crd); err != nil {
		t.Fatalf("allow-unknown-crd.yaml: %v", err)
	}
	envtest.Start(t).InstallCRDs(t, crd)

	r := newRig(t, string(read("rgd.yaml")), func(c *rigConfig) { c.storeThroughKroCRD = true })
	name := r.create(string(read("instance.yaml"))).GetName()
	r.until(name, 2*time.Minute, "ACTIVE", func(o reconciler.Observation, _ error) bool {
		return o.State.State == reconciler.InstanceStateActive
	})
	r.compareAsserts(dir, false)

	var want map[string]any
	if err := yaml.Unmarshal(read("owned.yaml"), &want); err != nil {
		t.Fatalf("owned.yaml: %v", err)
	}
	cm := r.get(gvrConfigMap, r.ns, "check-unknown-fields")
	if cm == nil {
		t.Fatal("ConfigMap check-unknown-fields was not created")
	}
	if err := assertSubset(want["data"], cm.Object["data"], "data"); err != nil {
		t.Errorf("owned.yaml: %v", err)
	}
}
