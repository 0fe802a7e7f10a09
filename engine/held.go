package engine

// Held counts what the engine holds for the cluster's objects. It falls
// back to what it was when instances are deleted and graphs stop: tests
// check that, and it is where to look when memory grows.
type Held struct {
	// CachedObjects are the objects the object cache remembers (children,
	// and instances whose informer has not caught up with a write).
	CachedObjects int
	// GoneUIDs are deleted objects remembered as gone, each for
	// objcache.GoneTTL (the set is swept on a later deletion).
	GoneUIDs int
	// Instances are the instances in the state store.
	Instances int
}

// Held returns the counts now.
func (e *Engine) Held() Held {
	cached, gone := e.reader.held()
	return Held{CachedObjects: cached, GoneUIDs: gone, Instances: len(e.store.Snapshot().Instances)}
}
