package reconciler

import (
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// RecreateLimit is how many passes in a row may create a resource's object
// before the resource is ERROR: an object that is missing again on every
// pass is being deleted by someone else (a controller, a policy, a
// script), and creating it forever only hides that.
const RecreateLimit = 5

// recreations counts, per instance and resource id, the passes in a row
// that had to create the object. A pass that finds the object does not end
// the streak at once: the Reader may still hold the object the last pass
// created after someone deleted it, and passes follow each other within
// milliseconds. Only an object seen again by a pass at least survival
// later (same UID, no create between) has survived. Resources of
// one layer run concurrently.
type recreations struct {
	mu sync.Mutex
	n  map[types.UID]map[string]*recreation
}

type recreation struct {
	passes int       // passes in a row that created the object
	seen   types.UID // the object a pass since the last create found
	seenAt time.Time
}

// survival is how long an object found by a pass must still be there for
// the streak to end: longer than the watch's lag behind a deletion.
const survival = time.Second

// note records one pass of resource id: created says whether it had to
// create the object, obj is the UID of the object it found or made. It
// returns the passes in a row that created it (0 once it survived).
func (c *recreations) note(uid types.UID, id string, created bool, obj types.UID, now time.Time) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.n[uid]
	rc := m[id]
	switch {
	case created:
		if c.n == nil {
			c.n = map[types.UID]map[string]*recreation{}
		}
		if m == nil {
			m = map[string]*recreation{}
			c.n[uid] = m
		}
		if rc == nil {
			rc = &recreation{}
			m[id] = rc
		}
		rc.passes++
		rc.seen = ""
		return rc.passes
	case rc == nil:
		return 0
	case rc.seen != obj:
		rc.seen, rc.seenAt = obj, now // found once: maybe a stale read
		return rc.passes
	case now.Sub(rc.seenAt) < survival:
		return rc.passes
	}
	delete(m, id) // found twice: it survived
	if len(m) == 0 {
		delete(c.n, uid)
	}
	return 0
}

// forget drops an instance's counts (it is gone).
func (c *recreations) forget(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.n, uid)
}

// keepsDeleted is the error of a resource whose object was created on
// passes passes in a row.
func keepsDeleted(id, object string, passes int) error {
	return fmt.Errorf("resource %s: %s was created on %d passes in a row: something keeps deleting it (kroscope recreates it and checks again with backoff)", id, object, passes)
}
