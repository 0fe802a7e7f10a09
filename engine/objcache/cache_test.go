package objcache

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

var k = Key{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespace: "ns", Name: "a"}

func obj(uid, rv, value string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"v": value}}}
	u.SetName("a")
	u.SetNamespace("ns")
	u.SetUID(types.UID(uid))
	u.SetResourceVersion(rv)
	return u
}

func value(u *unstructured.Unstructured) string {
	v, _, _ := unstructured.NestedString(u.Object, "data", "v")
	return v
}

// watch is what the informer shows: exists, at rv.
type watch struct {
	exists bool
	rv     string
}

func TestGetServesOnlyWhatTheWatchConfirms(t *testing.T) {
	cases := []struct {
		name  string
		setup func(c *Cache)
		watch watch
		want  string // the value served, "" for a miss
	}{
		{"nothing remembered", func(c *Cache) {}, watch{true, "1"}, ""},
		{"created, watch not there yet", func(c *Cache) { c.Wrote(k, obj("u1", "5", "new"), Absent) }, watch{false, ""}, "new"},
		{"created, watch caught up", func(c *Cache) { c.Wrote(k, obj("u1", "5", "new"), Absent) }, watch{true, "5"}, "new"},
		{"created, then changed by someone else", func(c *Cache) { c.Wrote(k, obj("u1", "5", "new"), Absent) }, watch{true, "9"}, ""},
		{"updated, watch still at the old version", func(c *Cache) { c.Wrote(k, obj("u1", "6", "v2"), "4") }, watch{true, "4"}, "v2"},
		{"updated twice, watch two behind", func(c *Cache) {
			c.Read(k, obj("u1", "3", "v1"))
			c.Wrote(k, obj("u1", "4", "v2"), "3")
			c.Wrote(k, obj("u1", "7", "v3"), "4")
		}, watch{true, "3"}, "v3"},
		// A read proves nothing about absence: an object kroscope does not
		// label is invisible to its watches and may be gone since.
		{"read, watch shows nothing", func(c *Cache) { c.Read(k, obj("u1", "3", "v1")) }, watch{false, ""}, ""},
		{"read, watch at that version", func(c *Cache) { c.Read(k, obj("u1", "3", "v1")) }, watch{true, "3"}, "v1"},
		{"updated, then the watch saw it deleted", func(c *Cache) { c.Wrote(k, obj("u1", "6", "v2"), "4") }, watch{false, ""}, ""},
		{"forgotten", func(c *Cache) { c.Wrote(k, obj("u1", "6", "v2"), "4"); c.Forget(k) }, watch{true, "4"}, ""},
		// A seed (a listed object) fills what nothing is known of, and is
		// served while the watch shows its version; it never replaces what
		// a read or a write recorded (the list may be older than they).
		{"seeded, watch at that version", func(c *Cache) { c.Seed(k, obj("u1", "3", "listed")) }, watch{true, "3"}, "listed"},
		{"seeded, watch at a later one", func(c *Cache) { c.Seed(k, obj("u1", "3", "listed")) }, watch{true, "5"}, ""},
		{"seeded after a write", func(c *Cache) {
			c.Wrote(k, obj("u1", "6", "written"), "3")
			c.Seed(k, obj("u1", "3", "listed"))
		}, watch{true, "3"}, "written"},
		{"seeded after a write, watch caught up", func(c *Cache) {
			c.Wrote(k, obj("u1", "6", "written"), "3")
			c.Seed(k, obj("u1", "3", "listed"))
		}, watch{true, "6"}, "written"},
		// A new object of the same name: versions of the old one prove nothing.
		{"recreated", func(c *Cache) {
			c.Wrote(k, obj("u1", "6", "old"), Absent)
			c.Wrote(k, obj("u2", "8", "new"), Absent)
		}, watch{true, "6"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := New()
			tc.setup(c)
			got, ok := c.Get(k, tc.watch.exists, tc.watch.rv)
			switch {
			case tc.want == "" && ok:
				t.Fatalf("served %q, want a miss", value(got))
			case tc.want != "" && !ok:
				t.Fatalf("miss, want %q", tc.want)
			case ok && value(got) != tc.want:
				t.Fatalf("served %q, want %q", value(got), tc.want)
			}
		})
	}
}

// A miss keeps the entry: the watch may be behind or ahead of it, and only
// the next read from the API server (which replaces it) can tell.
func TestMissKeepsTheEntryUntilReplaced(t *testing.T) {
	c := New()
	c.Wrote(k, obj("u1", "5", "new"), Absent)
	if _, ok := c.Get(k, true, "9"); ok {
		t.Fatal("served an object the watch has moved past")
	}
	if !c.Has(k) {
		t.Fatal("the entry was dropped: the caller would trust the watch's version blindly")
	}
	c.Read(k, obj("u1", "9", "theirs"))
	if got, ok := c.Get(k, true, "9"); !ok || value(got) != "theirs" {
		t.Fatalf("after the read: %v %v", ok, got)
	}
}

func TestDistrustMissesUntilRecorded(t *testing.T) {
	c := New()
	c.Wrote(k, obj("u1", "5", "mine"), "4")
	c.Distrust(k)
	for _, w := range []watch{{true, "4"}, {true, "5"}, {false, ""}} {
		if _, ok := c.Get(k, w.exists, w.rv); ok {
			t.Fatalf("served a distrusted object (watch %+v)", w)
		}
	}
	if !c.Has(k) {
		t.Fatal("distrust forgot the key")
	}
	c.Read(k, obj("u1", "7", "fresh"))
	if got, ok := c.Get(k, true, "7"); !ok || value(got) != "fresh" {
		t.Fatalf("after the read: %v %v", ok, got)
	}
}

func TestCaughtUpWatchNoLongerAcceptsOlderVersions(t *testing.T) {
	c := New()
	c.Wrote(k, obj("u1", "5", "new"), Absent)
	if _, ok := c.Get(k, true, "5"); !ok {
		t.Fatal("miss at the written version")
	}
	// The watch showed the object; showing it absent now means deleted.
	if _, ok := c.Get(k, false, ""); ok {
		t.Fatal("served an object the watch saw and then lost")
	}
}

func TestServedObjectsAreCopies(t *testing.T) {
	c := New()
	written := obj("u1", "5", "v")
	c.Wrote(k, written, Absent)
	written.Object["data"] = map[string]any{"v": "changed by the caller"}
	got, _ := c.Get(k, true, "5")
	got.Object["data"] = map[string]any{"v": "changed by the reader"}
	again, _ := c.Get(k, true, "5")
	if value(again) != "v" {
		t.Fatalf("the cache shares memory with its callers: %q", value(again))
	}
}

// The race CI found: the reconciler creates a child, something deletes it
// at once, and the watch delivers both events before the reconciler records
// what its create returned. The watch then shows no object, which for a
// freshly written one reads as "not caught up yet": without the gone set
// the dead object would be served as current and never recreated.
func TestRecordAfterTheWatchSawTheDeletionIsNotServed(t *testing.T) {
	c := New()
	c.Gone(k, "u1")                            // the watch: added, then deleted
	c.Wrote(k, obj("u1", "5", "dead"), Absent) // the reconciler records its create late
	if got, ok := c.Get(k, false, ""); ok {
		t.Fatalf("served %q, an object the watch saw deleted", value(got))
	}
	if c.Has(k) {
		t.Fatal("kept an entry for a deleted object")
	}
	c.Read(k, obj("u1", "6", "dead")) // a late GET result: same object, also dead
	if _, ok := c.Get(k, true, "6"); ok {
		t.Fatal("served a late read of a deleted object")
	}
	// A new object of the same name is a different UID: remembered as usual.
	c.Wrote(k, obj("u2", "9", "new"), Absent)
	if got, ok := c.Get(k, false, ""); !ok || value(got) != "new" {
		t.Fatalf("the recreated object: %v %v", ok, got)
	}
}

func TestGoneUIDsExpire(t *testing.T) {
	c := New()
	now := time.Unix(1000, 0)
	c.now = func() time.Time { return now }
	for i := range 100 {
		c.Gone(k, types.UID(fmt.Sprint("u", i)))
	}
	if c.GoneLen() != 100 {
		t.Fatalf("gone: %d", c.GoneLen())
	}
	now = now.Add(GoneTTL)
	c.Gone(k, "last")
	if c.GoneLen() != 1 {
		t.Fatalf("after the TTL, gone holds %d UIDs, want only the newest", c.GoneLen())
	}
}
