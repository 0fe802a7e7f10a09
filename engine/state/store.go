package state

import (
	"slices"
	"sync"
	"time"
)

// Limits on the bounded parts of the state.
const (
	DefaultHistoryLimit = 50
	DefaultLogLimit     = 1000
)

// Store holds the current state and hands out Snapshots. Writers call its
// methods from any goroutine; every write bumps the version and wakes the
// subscribers without ever blocking on them.
type Store struct {
	mu      sync.Mutex
	version uint64
	snap    *Snapshot // cached snapshot of version, nil when stale
	cluster Cluster
	mode    Mode
	engine  Engine
	startup Startup
	fatal   *Fatal
	caps    Capabilities
	watches map[string]Watch
	graphs  map[string]Graph
	kro     map[string]*KroGraph
	conds   map[string][]Condition // SetGraphConditions
	// order holds every instance sorted by key, kept in order as
	// instances come, change and go: a snapshot copies it, a lookup is a
	// binary search. Sorting a map's keys and looking each up for every
	// snapshot was a fifth of the engine's CPU at 10,000 instances (a
	// snapshot for each frame while they change).
	order    []*Instance
	logs     []LogLine
	logStart int // ring start when len(logs) == logLimit
	subs     map[int]chan struct{}
	nextSub  int

	historyLimit int
	logLimit     int
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{
		watches:      map[string]Watch{},
		graphs:       map[string]Graph{},
		kro:          map[string]*KroGraph{},
		conds:        map[string][]Condition{},
		subs:         map[int]chan struct{}{},
		historyLimit: DefaultHistoryLimit,
		logLimit:     DefaultLogLimit,
	}
}

// Subscribe returns a channel that receives a value after changes. Changes
// are coalesced: a burst of writes leaves one pending notification, and a
// slow reader never blocks a writer. Call cancel to unsubscribe.
func (s *Store) Subscribe() (<-chan struct{}, func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan struct{}, 1)
	id := s.nextSub
	s.nextSub++
	s.subs[id] = ch
	return ch, func() {
		s.mu.Lock()
		delete(s.subs, id)
		s.mu.Unlock()
	}
}

// Version returns the current version without building a snapshot.
func (s *Store) Version() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

// Snapshot returns the current state. The result is shared and must not be
// modified; it is rebuilt only when something changed.
func (s *Store) Snapshot() *Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.snap != nil {
		return s.snap
	}
	snap := &Snapshot{
		Version:      s.version,
		Cluster:      s.cluster,
		Mode:         s.mode,
		Engine:       s.engine,
		Startup:      s.startup,
		Fatal:        s.fatal,
		Capabilities: s.caps,
		Instances:    append(make([]*Instance, 0, len(s.order)), s.order...),
	}
	for _, w := range s.watches {
		snap.Watches = append(snap.Watches, w)
	}
	slices.SortFunc(snap.Watches, func(a, b Watch) int { return cmpString(a.Name, b.Name) })
	for _, g := range s.graphs {
		if k, ok := s.kro[g.Name]; ok {
			g.Kro = k
		}
		snap.Graphs = append(snap.Graphs, g)
	}
	slices.SortFunc(snap.Graphs, func(a, b Graph) int { return cmpString(a.Name, b.Name) })
	s.deriveGraphs(snap)
	snap.Logs = make([]LogLine, 0, len(s.logs))
	snap.Logs = append(snap.Logs, s.logs[s.logStart:]...)
	snap.Logs = append(snap.Logs, s.logs[:s.logStart]...)
	s.snap = snap
	return snap
}

// place is where key's instance is in s.order (found), or where it goes.
func (s *Store) place(key InstanceKey) (int, bool) {
	return slices.BinarySearchFunc(s.order, key, func(in *Instance, k InstanceKey) int { return in.Key.Compare(k) })
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// changed must be called with mu held after every write.
func (s *Store) changed() {
	s.version++
	s.snap = nil
	for _, ch := range s.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Instance returns the current value for key (read-only), or nil.
func (s *Store) Instance(key InstanceKey) *Instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, found := s.place(key); found {
		return s.order[i]
	}
	return nil
}

// UpdateInstance applies fn to a copy of the instance (a new zero Instance
// with Key set when absent) and stores the copy. fn may replace slices but
// must not modify the slices or maps of the old value in place. A change of
// State is appended to History by the store.
func (s *Store) UpdateInstance(key InstanceKey, fn func(*Instance)) {
	s.update(key, fn, true)
}

// UpdateExisting is UpdateInstance for an instance the store holds: it
// reports false and does nothing when the instance is gone, so a late
// write cannot bring back an instance the API server already removed.
func (s *Store) UpdateExisting(key InstanceKey, fn func(*Instance)) bool {
	return s.update(key, fn, false)
}

func (s *Store) update(key InstanceKey, fn func(*Instance), create bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, found := s.place(key)
	var old *Instance
	if found {
		old = s.order[i]
	}
	if old == nil && !create {
		return false
	}
	var next Instance
	if old != nil {
		next = *old
	} else {
		next = Instance{Key: key}
	}
	fn(&next)
	next.Key = key
	if old == nil || old.State != next.State {
		from := ""
		if old != nil {
			from = old.State
		}
		if next.State != "" && from != next.State {
			h := make([]Transition, 0, len(next.History)+1)
			h = append(h, next.History...)
			h = append(h, Transition{At: now(next.LastReconcile), From: from, To: next.State, Message: next.Message, Duration: next.LastDuration})
			if len(h) > s.historyLimit {
				h = h[len(h)-s.historyLimit:]
			}
			next.History = h
		}
	}
	s.version++
	next.Version = s.version
	if found {
		s.order[i] = &next
	} else {
		s.order = slices.Insert(s.order, i, &next)
	}
	s.version-- // changed() bumps it again
	s.changed()
	return true
}

func now(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now()
	}
	return t
}

// RemoveInstance forgets an instance (it is gone from the cluster).
func (s *Store) RemoveInstance(key InstanceKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, found := s.place(key)
	if !found {
		return
	}
	s.order = slices.Delete(s.order, i, i+1)
	s.changed()
}

// SetGraph records or replaces a graph by name.
func (s *Store) SetGraph(g Graph) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.graphs[g.Name] = g
	s.changed()
}

// RemoveGraph forgets a graph.
func (s *Store) RemoveGraph(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.graphs, name)
	delete(s.kro, name)
	delete(s.conds, name)
	// Its instances nobody serves go with it: no graph is left to say why.
	s.order = slices.DeleteFunc(s.order, func(in *Instance) bool { return in.Graph == name && in.Unserved })
	s.changed()
}

// KroOf is kro's view of the graph named name, nil when none is recorded.
func (s *Store) KroOf(name string) *KroGraph {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k := s.kro[name]; k != nil {
		c := *k
		return &c
	}
	return nil
}

// SetKro records kro's view of a graph (nil forgets it); it is kept apart
// from SetGraph so the two writers never overwrite each other. Setting the
// same value again is not a change.
func (s *Store) SetKro(name string, k *KroGraph) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, had := s.kro[name]
	switch {
	case k == nil && !had:
		return
	case k != nil && had && old != nil && old.equal(k):
		return
	case k == nil:
		delete(s.kro, name)
	default:
		s.kro[name] = k
	}
	s.changed()
}

// SetWatch records the health of one watch, keeping Since when Healthy did
// not change.
func (s *Store) SetWatch(w Watch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.watches[w.Name]; ok {
		if old == w || (old.Healthy == w.Healthy && w.Since.IsZero()) {
			if old.Synced == w.Synced && old.Err == w.Err && old.Forbidden == w.Forbidden {
				return
			}
			w.Since = old.Since
		}
	}
	if w.Since.IsZero() {
		w.Since = time.Now()
	}
	s.watches[w.Name] = w
	s.changed()
}

// RemoveWatch forgets a stopped watch.
func (s *Store) RemoveWatch(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.watches[name]; !ok {
		return
	}
	delete(s.watches, name)
	s.changed()
}

// SetEngine replaces the engine counters.
func (s *Store) SetEngine(e Engine) {
	setChanged(s, &s.engine, e)
}

// SetCluster records where kroscope is connected.
func (s *Store) SetCluster(c Cluster) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cluster = c
	s.changed()
}

// SetMode records whether this process reconciles or observes.
func (s *Store) SetMode(m Mode) {
	setChanged(s, &s.mode, m)
}

// SetStartup records start-up progress.
func (s *Store) SetStartup(st Startup) {
	setChanged(s, &s.startup, st)
}

// SetFatal records (or clears, with nil) an error that stops the engine.
func (s *Store) SetFatal(f *Fatal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fatal = f
	s.changed()
}

// AppendLog adds a log line, dropping the oldest past the limit.
func (s *Store) AppendLog(l LogLine) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.logs) < s.logLimit {
		s.logs = append(s.logs, l)
	} else {
		s.logs[s.logStart] = l
		s.logStart = (s.logStart + 1) % s.logLimit
	}
	s.changed()
}

// setChanged sets *field to v under s's lock, and signals a change only
// when v differs from what it was.
func setChanged[T comparable](s *Store, field *T, v T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if *field == v {
		return
	}
	*field = v
	s.changed()
}
