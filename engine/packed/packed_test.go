package packed

import (
	"reflect"
	"testing"
)

func TestPackRoundTripKeepsNumbersAndShapes(t *testing.T) {
	in := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "a", "labels": map[string]any{"x": "y"}},
		"spec":     map[string]any{"replicas": int64(3), "ratio": 0.5, "on": true, "none": nil, "list": []any{"a", int64(1), map[string]any{"k": "v"}}},
	}
	o, err := Pack(in)
	if err != nil {
		t.Fatal(err)
	}
	if o.IsZero() || o.Len() == 0 {
		t.Fatal("packed object is empty")
	}
	out := o.Map()
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip changed the object:\n in %#v\nout %#v", in, out)
	}
	// Each decode is the caller's own copy.
	out["kind"] = "Changed"
	if o.Map()["kind"] != "ConfigMap" {
		t.Fatal("changing a decoded copy changed the packed object")
	}
}

func TestZeroObject(t *testing.T) {
	o, err := Pack(nil)
	if err != nil || !o.IsZero() || o.Map() != nil {
		t.Fatalf("Pack(nil) = %v, %v; want the zero Object decoding to nil", o, err)
	}
	if (Object{}).Map() != nil {
		t.Fatal("zero Object decodes to a map")
	}
}

// The point of the package: an object packed is much smaller than its map
// tree (measured here by the allocations a decode makes).
func TestPackedIsSmallerThanItsMapTree(t *testing.T) {
	in := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "i0001-a", "namespace": "default", "uid": "6a1f2b3c-0000-4000-8000-000000000001", "resourceVersion": "12345",
			"labels": map[string]any{"kro.run/instance-id": "6a1f2b3c-0000-4000-8000-000000000002", "kro.run/node-id": "a", "kro.run/owned": "true"}},
		"data": map[string]any{"value": "one"}}
	o, _ := Pack(in)
	var m map[string]any
	allocs := testing.AllocsPerRun(10, func() { m = o.Map() })
	_ = m
	if o.Len() > 400 {
		t.Fatalf("packed ConfigMap is %d bytes; want a few hundred", o.Len())
	}
	if allocs < 10 {
		t.Fatalf("decoding made %.0f allocations: the map tree should cost many more objects than the packed bytes", allocs)
	}
}

func TestPackAgainstKeepsOnlyWhatDiffers(t *testing.T) {
	labels := func() map[string]any {
		return map[string]any{"kro.run/instance-id": "6a1f2b3c-0000-4000-8000-000000000002", "kro.run/resource-graph-definition-id": "6a1f2b3c-0000-4000-8000-000000000003",
			"kro.run/instance-name": "i0001", "kro.run/node-id": "a", "kro.run/owned": "true"}
	}
	desired := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "a", "labels": labels()},
		"data":     map[string]any{"k": "want", "same": "s", "nested": map[string]any{"n": int64(1)}},
		"list":     []any{"a", "b"},
		"new":      "only desired"}
	observed := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "a", "uid": "u", "resourceVersion": "5", "labels": labels()},
		"data":     map[string]any{"k": "live", "same": "s", "nested": map[string]any{"n": int64(1)}},
		"list":     []any{"a"}}
	base, _ := Pack(observed)
	rel, err := PackAgainst(desired, observed)
	if err != nil {
		t.Fatal(err)
	}
	whole, _ := Pack(desired)
	if !rel.Relative() || rel.Len() >= whole.Len() {
		t.Fatalf("relative packing is %d bytes, whole %d: want smaller", rel.Len(), whole.Len())
	}
	got, err := rel.UnpackAgainst(base)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, desired) {
		t.Fatalf("UnpackAgainst =\n%#v\nwant\n%#v", got, desired)
	}
	// The same object packs to the same bytes, whatever the maps' order.
	for range 20 {
		if again, _ := PackAgainst(desired, observed); !again.Equal(rel) {
			t.Fatal("packing the same object twice gave different bytes")
		}
	}
	// A delta that would not be smaller is not made.
	if tiny, _ := PackAgainst(map[string]any{"a": "b"}, map[string]any{"a": "b"}); tiny.Relative() {
		t.Error("a one-entry object was packed as a delta, which is larger")
	}
	// An object packed whole needs no base.
	if got, _ := whole.UnpackAgainst(Object{}); !reflect.DeepEqual(got, desired) {
		t.Fatalf("whole object unpacked against nothing = %#v", got)
	}
	// Without its base the relative object cannot be rebuilt: an error,
	// not a wrong object.
	if got, err := rel.UnpackAgainst(Object{}); err == nil && reflect.DeepEqual(got, desired) {
		t.Fatal("relative object decoded without its base")
	}
}

func TestJSONEqual(t *testing.T) {
	cases := []struct {
		a, b any
		want bool
	}{
		{map[string]any{"a": []any{int64(1), "x", nil, true, 0.5}}, map[string]any{"a": []any{int64(1), "x", nil, true, 0.5}}, true},
		{map[string]any{"a": int64(1)}, map[string]any{"a": int64(2)}, false},
		{map[string]any{"a": int64(1)}, map[string]any{"a": 1.0}, false}, // decoded back, an int64 stays one
		{map[string]any{"a": "x"}, map[string]any{"a": "x", "b": "y"}, false},
		{map[string]any{"a": "x", "c": "y"}, map[string]any{"a": "x", "b": "y"}, false},
		{[]any{"a"}, []any{"a", "b"}, false},
		{nil, nil, true},
		{nil, map[string]any{}, false},
		{int32(1), int32(1), false}, // not a decoded JSON value
	}
	for _, c := range cases {
		if got := jsonEqual(c.a, c.b); got != c.want {
			t.Errorf("jsonEqual(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
