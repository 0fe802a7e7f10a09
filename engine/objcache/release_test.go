package objcache

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

func withManagedFields(u *unstructured.Unstructured) *unstructured.Unstructured {
	_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{
		"manager": "kroscope", "operation": "Apply", "apiVersion": "v1", "time": "2026-01-01T00:00:00Z",
		"fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:data": map[string]any{"f:v": map[string]any{}}},
	}}, "metadata", "managedFields")
	return u
}

// What is kept has managedFields without their field sets, and the caller's
// object is left whole.
func TestKeptWithoutFieldSets(t *testing.T) {
	c := New()
	in := withManagedFields(obj("u1", "5", "x"))
	c.Wrote(k, in, Absent)
	got, ok := c.Get(k, true, "5")
	if !ok {
		t.Fatal("miss")
	}
	mf := got.GetManagedFields()
	if len(mf) != 1 || mf[0].Manager != "kroscope" || mf[0].Operation != "Apply" || mf[0].Time == nil {
		t.Fatalf("managedFields = %+v, want the entry's manager, operation and time", mf)
	}
	if mf[0].FieldsV1 != nil {
		t.Errorf("fieldsV1 kept: %s", mf[0].FieldsV1.Raw)
	}
	if in.GetManagedFields()[0].FieldsV1 == nil {
		t.Error("the caller's object lost its fieldsV1")
	}
}

// Current hands out the kept encoding of exactly that version; CaughtUp
// drops it only when the watch shows that version.
func TestCurrentAndCaughtUp(t *testing.T) {
	c := New()
	c.Wrote(k, obj("u1", "5", "x"), Absent)
	if _, ok := c.Current(k, "u1", "4"); ok {
		t.Error("Current served another version")
	}
	if _, ok := c.Current(k, "u2", "5"); ok {
		t.Error("Current served another object of the name")
	}
	a, ok1 := c.Current(k, "u1", "5")
	b, ok2 := c.Current(k, "u1", "5")
	if !ok1 || !ok2 || !a.Equal(b) || a.Map()["data"].(map[string]any)["v"] != "x" {
		t.Fatal("Current does not hand out the kept object")
	}
	c.CaughtUp(k, "4")
	if !c.Has(k) {
		t.Fatal("CaughtUp at an older version dropped the entry")
	}
	c.CaughtUp(k, "5")
	if c.Has(k) {
		t.Fatal("CaughtUp at the kept version left the entry")
	}
}

// Everything of deleted objects is released: the entries at once, the gone
// set once GoneTTL has passed (it is swept on the next deletion).
func TestDeletedObjectsReleased(t *testing.T) {
	c := New()
	at := time.Unix(1000, 0)
	c.now = func() time.Time { return at }
	const n = 300
	for i := range n {
		ki := Key{GVR: k.GVR, Namespace: "ns", Name: fmt.Sprintf("o%d", i)}
		u := obj(fmt.Sprintf("u%d", i), "1", "v")
		u.SetName(ki.Name)
		c.Wrote(ki, u, Absent)
	}
	if c.Len() != n {
		t.Fatalf("Len = %d, want %d", c.Len(), n)
	}
	for i := range n {
		c.Gone(Key{GVR: k.GVR, Namespace: "ns", Name: fmt.Sprintf("o%d", i)}, types.UID(fmt.Sprintf("u%d", i)))
	}
	if c.Len() != 0 {
		t.Errorf("Len after the deletions = %d, want 0", c.Len())
	}
	if c.GoneLen() != n {
		t.Errorf("GoneLen = %d, want %d within GoneTTL", c.GoneLen(), n)
	}
	at = at.Add(GoneTTL)
	c.Gone(k, "later")
	if c.GoneLen() != 1 {
		t.Errorf("GoneLen after GoneTTL = %d, want 1 (only the later deletion)", c.GoneLen())
	}
}

// ForgetIf drops what it selects, distrusted entries included.
func TestForgetIf(t *testing.T) {
	c := New()
	other := Key{GVR: k.GVR, Namespace: "ns", Name: "b"}
	c.Wrote(k, obj("u1", "5", "x"), Absent)
	c.Distrust(other)
	if got := c.ForgetIf(func(Key, *unstructured.Unstructured) bool { return true }); got != 2 || c.Len() != 0 {
		t.Errorf("ForgetIf dropped %d, Len %d; want 2, 0", got, c.Len())
	}
}
