package desired

import (
	"maps"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kroscope/kroscope/reconciler/metadata"
)

func TestHashIsStable(t *testing.T) {
	a := &unstructured.Unstructured{Object: map[string]any{"b": int64(1), "a": map[string]any{"y": "1", "x": "2"}}}
	b := &unstructured.Unstructured{Object: map[string]any{"a": map[string]any{"x": "2", "y": "1"}, "b": int64(1)}}
	ha, _ := Hash(a)
	hb, _ := Hash(b)
	if ha != hb || ha == "" {
		t.Errorf("hashes %q and %q differ for equal objects", ha, hb)
	}
	b.Object["b"] = int64(2)
	if hc, _ := Hash(b); hc == ha {
		t.Error("hash did not change with the object")
	}
}

// The hash is the rendered object's, whether or not the object already
// carries the annotation a first try set: a create that found the name
// taken retries the same object, and hashing the annotation too re-applied
// every converged child twice after each start (#40). An object that never
// had the annotation hashes as it always did.
func TestHashLeavesOutItsOwnAnnotation(t *testing.T) {
	for name, obj := range map[string]map[string]any{
		"other annotations": {"metadata": map[string]any{"name": "a", "annotations": map[string]any{"k": "v"}}, "data": map[string]any{"x": "1"}},
		"no annotations":    {"metadata": map[string]any{"name": "a"}, "data": map[string]any{"x": "1"}},
	} {
		t.Run(name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: obj}
			before, _ := Hash(u)
			u.SetAnnotations(mergeStrings(u.GetAnnotations(), metadata.DesiredHashAnnotation, before))
			withAnn := u.DeepCopy()
			again, _ := Hash(u)
			if again != before {
				t.Errorf("hash with its own annotation = %s, want %s", again, before)
			}
			if !equality.Semantic.DeepEqual(u.Object, withAnn.Object) {
				t.Errorf("hashing changed the object: %v, want %v", u.Object, withAnn.Object)
			}
		})
	}
}

func mergeStrings(m map[string]string, k, v string) map[string]string {
	out := maps.Clone(m)
	if out == nil {
		out = map[string]string{}
	}
	out[k] = v
	return out
}

// Current: the one answer to "is this child already what kroscope would
// write?", from the two objects alone (#40: a process that just started
// must answer as the one that wrote the child).
func TestCurrent(t *testing.T) {
	rendered := func() *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "a", "namespace": "ns", "labels": map[string]any{"app": "x"}},
			"data":     map[string]any{"k": "v"},
		}}
	}
	want := rendered()
	h, err := Hash(want)
	if err != nil {
		t.Fatal(err)
	}
	want.SetAnnotations(map[string]string{metadata.DesiredHashAnnotation: h})
	stored := func(mod func(*unstructured.Unstructured)) *unstructured.Unstructured {
		// What the API server returns: want plus what it sets.
		u := want.DeepCopy()
		_ = unstructured.SetNestedField(u.Object, "42", "metadata", "resourceVersion")
		_ = unstructured.SetNestedField(u.Object, "uid-1", "metadata", "uid")
		_ = unstructured.SetNestedField(u.Object, "other", "metadata", "labels", "added-by-someone")
		if mod != nil {
			mod(u)
		}
		return u
	}
	for _, tc := range []struct {
		name string
		want *unstructured.Unstructured
		live *unstructured.Unstructured
		ok   bool
	}{
		{"as stored, with what the server and others added", want, stored(nil), true},
		{"a value changed by someone", want, stored(func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "edited", "data", "k")
		}), false},
		{"a value removed by someone", want, stored(func(u *unstructured.Unstructured) {
			unstructured.RemoveNestedField(u.Object, "data", "k")
		}), false},
		{"written by another renderer (no hash)", want, stored(func(u *unstructured.Unstructured) {
			u.SetAnnotations(nil)
		}), false},
		{"the template changed since (a field dropped: still in live)", func() *unstructured.Unstructured {
			w := rendered()
			unstructured.RemoveNestedField(w.Object, "metadata", "labels")
			hh, _ := Hash(w)
			w.SetAnnotations(map[string]string{metadata.DesiredHashAnnotation: hh})
			return w
		}(), stored(nil), false},
		{"want without a hash is never current", rendered(), stored(nil), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Current(tc.want, tc.live); got != tc.ok {
				t.Errorf("Current = %v, want %v", got, tc.ok)
			}
		})
	}
}
