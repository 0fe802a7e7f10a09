package client

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// countingMapper is a DefaultRESTMapper that counts the mappings asked of
// it and can learn kinds, as discovery does after a Reset.
type countingMapper struct {
	*meta.DefaultRESTMapper
	asked, resets int
	learn         []schema.GroupVersionKind // added on the next Reset
}

func (c *countingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	c.asked++
	return c.DefaultRESTMapper.RESTMapping(gk, versions...)
}

func (c *countingMapper) Reset() {
	c.resets++
	for _, gvk := range c.learn {
		c.Add(gvk, meta.RESTScopeNamespace)
	}
	c.learn = nil
}

// A kind's mapping is worked out once per version until a Reset; a copy is
// handed out each time; misses and many-version questions go through; a
// Reset forgets, so a kind served since is found; nil stays nil.
func TestMemoMapper(t *testing.T) {
	cm := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	web := schema.GroupVersionKind{Group: "kro.run", Version: "v1alpha1", Kind: "WebApp"}
	inner := &countingMapper{DefaultRESTMapper: meta.NewDefaultRESTMapper([]schema.GroupVersion{{Version: "v1"}, {Group: "kro.run", Version: "v1alpha1"}})}
	inner.Add(cm, meta.RESTScopeNamespace)
	m := memoize(inner)

	for range 3 {
		got, err := m.RESTMapping(cm.GroupKind(), "v1")
		if err != nil || got.Resource.Resource != "configmaps" {
			t.Fatalf("mapping = %v, %v", got, err)
		}
		got.Resource.Resource = "changed by the caller"
	}
	if _, err := m.RESTMapping(cm.GroupKind()); err != nil {
		t.Fatal(err)
	}
	if inner.asked != 2 {
		t.Errorf("the mapper underneath was asked %d times, want 2 (once per version asked)", inner.asked)
	}
	if _, err := m.RESTMapping(cm.GroupKind(), "v1", "v2"); err != nil || inner.asked != 3 {
		t.Errorf("a question with two versions: err %v, asked %d, want it passed through", err, inner.asked)
	}

	for range 2 {
		if _, err := m.RESTMapping(web.GroupKind(), web.Version); !meta.IsNoMatchError(err) {
			t.Fatalf("an unknown kind: err %v, want NoMatch", err)
		}
	}
	if inner.asked != 5 {
		t.Errorf("misses asked %d times in all, want 5 (misses are not remembered)", inner.asked)
	}

	inner.learn = []schema.GroupVersionKind{web}
	m.Reset()
	if inner.resets != 1 {
		t.Errorf("Reset reached the mapper underneath %d times, want 1", inner.resets)
	}
	if got, err := m.RESTMapping(web.GroupKind(), web.Version); err != nil || got.Resource.Resource != "webapps" {
		t.Errorf("after Reset: %v, %v; want the new kind", got, err)
	}
	before := inner.asked
	if _, err := m.RESTMapping(cm.GroupKind(), "v1"); err != nil || inner.asked != before+1 {
		t.Errorf("after Reset a kind is worked out again: asked %d, want %d", inner.asked, before+1)
	}

	if memoize(nil) != nil {
		t.Error("memoize(nil) is not nil: callers read nil as no mapper")
	}
	if memoize(m) != m {
		t.Error("memoizing twice wraps twice")
	}
}
