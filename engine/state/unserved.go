package state

import "slices"

// A graph that stops serving its kind (a new definition the engine
// refuses, a definition being replaced, an RGD that became invalid) no
// longer watches its instances, but they are still stored in the
// cluster: they stay in the state, marked Unserved, with the last state
// seen, and the graph's state says why nobody serves them. Removing them
// hid them: the list lost an instance the cluster still held (#38).

// Unserve marks every instance of resource (the kind's "plural.group")
// as no longer served.
func (s *Store) Unserve(resource string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mark(func(in *Instance) bool { return in.Key.Resource == resource && !in.Unserved })
}

// ForgetUnserved forgets the instances of resource still marked
// Unserved once the kind is served again and its instances listed (each
// listed one is noted again, which clears its mark): those are gone from
// the cluster.
func (s *Store) ForgetUnserved(resource string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forget(func(in *Instance) bool { return in.Key.Resource == resource && in.Unserved })
}

// mark sets Unserved on a copy of each instance match takes (mu held).
func (s *Store) mark(match func(*Instance) bool) {
	v, n := s.version+1, 0 // changed() bumps the version to v
	for i, in := range s.order {
		if match(in) {
			next := *in
			next.Unserved, next.Version = true, v
			s.order[i] = &next
			n++
		}
	}
	if n > 0 {
		s.changed()
	}
}

// forget removes the instances match takes (mu held).
func (s *Store) forget(match func(*Instance) bool) {
	n := len(s.order)
	s.order = slices.DeleteFunc(s.order, match)
	if len(s.order) != n {
		s.changed()
	}
}
