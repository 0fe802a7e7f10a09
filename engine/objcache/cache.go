// Package objcache remembers the objects a reconciler read or wrote, and
// hands them back for as long as a watch shows they are still current.
//
// kroscope watches children metadata-only (their data would cost memory
// for every object of the kind), so a watch event says an object changed
// but not what it holds. The objects the API server returned to the
// reconciler fill that gap: a remembered object is served when the watch
// shows its resourceVersion, or one that the remembered object is known
// to have replaced (the watch is behind our own write). Anything else (a
// change by someone else, an object the watch lost) is a miss, and the
// reconciler reads from the API server, which records the new version.
// resourceVersions are compared only for equality, as the API conventions
// require.
//
// Objects are kept encoded (package packed) and decoded for each reader:
// the cache holds every child of every instance, and a decoded map tree
// costs several times its encoding.
package objcache

import (
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kroscope/kroscope/engine/packed"
	"github.com/kroscope/kroscope/engine/slim"
)

// Key names an object.
type Key struct {
	GVR       schema.GroupVersionResource
	Namespace string
	Name      string
}

// Absent is the resourceVersion a create replaces: the object did not exist.
const Absent = ""

type entry struct {
	obj *kept // nil: distrusted
	// replaced are resourceVersions (Absent included) older than obj's:
	// a watch showing one of them has not caught up with obj yet. Rarely
	// more than two, so a slice.
	replaced []string
}

// kept is a remembered object: encoded, with what the cache compares.
type kept struct {
	packed packed.Object
	uid    types.UID
	rv     string
}

func (e *entry) replacedBy(rv string) bool { return slices.Contains(e.replaced, rv) }

// GoneTTL is how long an object the watch saw deleted is remembered as
// gone. It only has to outlast the gap between an API call returning and
// its result being recorded (a busy reconciler may record a create after
// the watch already delivered the object's deletion); a few minutes is
// ample and keeps the set small.
const GoneTTL = 5 * time.Minute

// Cache is safe for concurrent use.
type Cache struct {
	mu sync.Mutex
	m  map[Key]*entry
	// gone holds the UIDs of objects the watch saw deleted, and when: a
	// version of one recorded afterwards is already dead and must not be
	// served (absence would look like "the watch has not seen the create").
	gone      map[types.UID]time.Time
	lastSweep time.Time
	now       func() time.Time
}

// New returns an empty cache.
func New() *Cache { return &Cache{m: map[Key]*entry{}, gone: map[types.UID]time.Time{}, now: time.Now} }

// Get returns a copy of the remembered object when the watch's view of it
// (exists, at resourceVersion rv) shows it is current: the watch is at
// obj's version, or at one obj replaced. Otherwise it is a miss, and the
// entry stays until a read or a write replaces it: the watch may be behind
// a version the API server returned, or ahead of it, and only the API
// server can tell which.
func (c *Cache) Get(k Key, exists bool, rv string) (*unstructured.Unstructured, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[k]
	if e == nil || e.obj == nil {
		return nil, false
	}
	if !exists {
		rv = Absent
	}
	switch {
	case exists && rv == e.obj.rv:
		e.replaced = nil // caught up: older versions can no longer show
	case e.replacedBy(rv):
	default:
		return nil, false
	}
	m, err := e.obj.packed.Unpack()
	if err != nil {
		return nil, false // cannot happen for what put encoded; a miss is safe
	}
	return &unstructured.Unstructured{Object: m}, true
}

// Distrust marks k as changed in a way the watch may not show yet (a write
// was refused as a conflict): every Get misses until a read or a write
// records it again.
func (c *Cache) Distrust(k Key) {
	c.mu.Lock()
	c.m[k] = &entry{}
	c.mu.Unlock()
}

// Read remembers obj, which the API server just returned for a read.
func (c *Cache) Read(k Key, obj *unstructured.Unstructured) { c.put(k, obj, nil, false) }

// Seed remembers obj, which a list the API server answered held, only
// where nothing is known of k yet: a list is not ordered with the reads
// and writes recorded while it was answered, so it never replaces what
// they recorded. A process that just started seeds what its first
// reconciles will read, instead of reading every child with a GET.
func (c *Cache) Seed(k Key, obj *unstructured.Unstructured) { c.put(k, obj, nil, true) }

// Wrote remembers obj, which the API server returned for a write based on
// resourceVersion replaces (Absent for a create): until the watch shows obj,
// showing replaces only means the watch is behind.
func (c *Cache) Wrote(k Key, obj *unstructured.Unstructured, replaces string) {
	c.put(k, obj, &replaces, false)
}

// put records obj. Every version remembered before is older than obj: the
// caller records in the order it talks to the API server.
func (c *Cache) put(k Key, obj *unstructured.Unstructured, replaces *string, seed bool) {
	// Kept without managedFields' field sets (package slim): nothing
	// served from here reads them, and they are most of a small object.
	// Encoded before taking the lock, which every reconcile's reads share.
	p, err := packed.Pack(slim.View(obj).Object)
	c.mu.Lock()
	defer c.mu.Unlock()
	if seed && c.m[k] != nil {
		return
	}
	if err != nil {
		// Not encodable (cannot happen for what the API server returned):
		// whatever was known is older, so forget it and let reads ask.
		delete(c.m, k)
		return
	}
	if _, dead := c.gone[obj.GetUID()]; dead && obj.GetUID() != "" {
		// The watch already saw this object deleted: remembering it would
		// serve a dead object as current. Whatever was known is stale too.
		delete(c.m, k)
		return
	}
	rv := obj.GetResourceVersion()
	e := &entry{obj: &kept{packed: p, uid: obj.GetUID(), rv: rv}}
	add := func(v string) {
		if v != rv && !e.replacedBy(v) {
			e.replaced = append(e.replaced, v)
		}
	}
	if old := c.m[k]; old != nil && old.obj != nil && old.obj.uid == e.obj.uid {
		for _, v := range old.replaced {
			add(v)
		}
		add(old.obj.rv)
	}
	if replaces != nil {
		add(*replaces)
	}
	c.m[k] = e
}

// Current returns the remembered object's encoding (immutable, shared)
// when it is the version uid/rv: a reader that keeps what a reconcile
// observed (the state store) can hold these same bytes instead of its own.
func (c *Cache) Current(k Key, uid types.UID, rv string) (packed.Object, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[k]
	if e == nil || e.obj == nil || e.obj.uid != uid || e.obj.rv != rv {
		return packed.Object{}, false
	}
	return e.obj.packed, true
}

// CaughtUp drops k when the remembered object is version rv, which a watch
// holding full objects now shows: the watch serves it from now on, and
// keeping a second copy would double what every instance costs.
func (c *Cache) CaughtUp(k Key, rv string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[k]; e != nil && e.obj != nil && e.obj.rv == rv {
		delete(c.m, k)
	}
}

// ForgetIf drops every entry drop selects (obj is nil for a distrusted
// entry), and returns how many it dropped: what a stopped graph's
// instances and children left behind, which no watch event will remove.
// Each object is decoded for drop: this runs when a graph stops, not per
// reconcile.
func (c *Cache) ForgetIf(drop func(k Key, obj *unstructured.Unstructured) bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for k, e := range c.m {
		var obj *unstructured.Unstructured
		if e.obj != nil {
			if m, err := e.obj.packed.Unpack(); err == nil {
				obj = &unstructured.Unstructured{Object: m}
			}
		}
		if drop(k, obj) {
			delete(c.m, k)
			n++
		}
	}
	return n
}

// Forget drops k (deleted, or seen deleted by the watch).
func (c *Cache) Forget(k Key) {
	c.mu.Lock()
	delete(c.m, k)
	c.mu.Unlock()
}

// Gone drops k because the watch saw the object with uid deleted, and
// remembers uid so that a late record of that object (an API call that
// returned before the deletion but is recorded after it) is not kept.
func (c *Cache) Gone(k Key, uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, k)
	if uid == "" {
		return
	}
	now := c.now()
	c.gone[uid] = now
	if now.Sub(c.lastSweep) >= GoneTTL {
		for u, at := range c.gone {
			if now.Sub(at) >= GoneTTL {
				delete(c.gone, u)
			}
		}
		c.lastSweep = now
	}
}

// Has reports whether k is remembered.
func (c *Cache) Has(k Key) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[k] != nil
}

// Len is the number of remembered objects.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// GoneLen is the number of deleted objects still remembered as gone.
func (c *Cache) GoneLen() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.gone)
}
