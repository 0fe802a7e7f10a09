package state

import (
	"sort"
	"strings"
)

// Permission is whether this user may do one thing, and why not.
type Permission struct {
	Allowed bool
	// Why says, when not allowed, what the API server denied, e.g.
	// "user jane may not delete webapps.kro.run in team-a".
	Why string
}

// KindAccess is what this user may do with one instance kind in the
// namespaces shown, from SelfSubjectAccessReviews.
type KindAccess struct {
	// Resource is the kind's "plural.group", as InstanceKey.Resource.
	Resource string
	// Namespace is the namespace checked; "" means all namespaces.
	Namespace string
	// Observe: list and watch. Requeue: patch (the requeue annotation).
	// Delete: delete. Edit: update and patch.
	Observe, Requeue, Delete, Edit Permission
}

// Capabilities are what this user may do, per instance kind. Nothing
// checked (the demo, a kind not checked yet, a failed check) means
// allowed: the API server still refuses what it must.
type Capabilities struct {
	// User is who was checked, when the API server said ("" otherwise).
	User  string
	Kinds []KindAccess // sorted by Resource
	// Lease says why this user may not take the Lease that elects the
	// writer ("" when it may or it was not checked): it only observes.
	Lease string
}

// allowed is a KindAccess of a kind whose access is not known.
func allowed(resource string) KindAccess {
	ok := Permission{Allowed: true}
	return KindAccess{Resource: resource, Observe: ok, Requeue: ok, Delete: ok, Edit: ok}
}

// For returns the access to resource's instances (everything allowed when
// it was not checked).
func (c Capabilities) For(resource string) KindAccess {
	for _, k := range c.Kinds {
		if k.Resource == resource {
			return k
		}
	}
	return allowed(resource)
}

// with returns c with k recorded (replacing the kind's earlier access).
func (c Capabilities) with(k KindAccess) Capabilities {
	kinds := make([]KindAccess, 0, len(c.Kinds)+1)
	for _, o := range c.Kinds {
		if o.Resource != k.Resource {
			kinds = append(kinds, o)
		}
	}
	kinds = append(kinds, k)
	sort.Slice(kinds, func(i, j int) bool { return kinds[i].Resource < kinds[j].Resource })
	c.Kinds = kinds
	return c
}

// without returns c without resource's access.
func (c Capabilities) without(resource string) Capabilities {
	var kinds []KindAccess
	for _, o := range c.Kinds {
		if o.Resource != resource {
			kinds = append(kinds, o)
		}
	}
	c.Kinds = kinds
	return c
}

// Summary is the header's words for what this user may do, e.g. "can
// observe, requeue, delete, edit" or "can observe; cannot requeue, delete,
// edit"; an action allowed for some kinds only is "delete (some kinds)".
// "" when nothing was checked.
func (c Capabilities) Summary() string {
	if len(c.Kinds) == 0 {
		return ""
	}
	names := []string{"observe", "requeue", "delete", "edit"}
	pick := func(k KindAccess, i int) bool {
		return [...]bool{k.Observe.Allowed, k.Requeue.Allowed, k.Delete.Allowed, k.Edit.Allowed}[i]
	}
	var can, cannot []string
	for i, n := range names {
		yes := 0
		for _, k := range c.Kinds {
			if pick(k, i) {
				yes++
			}
		}
		switch yes {
		case len(c.Kinds):
			can = append(can, n)
		case 0:
			cannot = append(cannot, n)
		default:
			can = append(can, n+" (some kinds)")
		}
	}
	var parts []string
	if len(can) > 0 {
		parts = append(parts, "can "+strings.Join(can, ", "))
	}
	if len(cannot) > 0 {
		parts = append(parts, "cannot "+strings.Join(cannot, ", "))
	}
	return strings.Join(parts, "; ")
}

// SetAccess records what this user may do with one kind.
func (s *Store) SetAccess(k KindAccess) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.caps = s.caps.with(k)
	s.changed()
}

// SetAccessUser records who the capabilities are of.
func (s *Store) SetAccessUser(user string) {
	setChanged(s, &s.caps.User, user)
}

// SetLeaseDenied records why this user may not take the Lease.
func (s *Store) SetLeaseDenied(why string) {
	setChanged(s, &s.caps.Lease, why)
}

// ForgetAccess drops a kind's access (its graph stopped).
func (s *Store) ForgetAccess(resource string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.caps = s.caps.without(resource)
	s.changed()
}

// Access returns the access to resource's instances, without building a
// snapshot (the engine checks it before an action).
func (s *Store) Access(resource string) KindAccess {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps.For(resource)
}

// CheckedAccess returns resource's recorded access, and false when none
// was recorded (not checked yet, or the check failed).
func (s *Store) CheckedAccess(resource string) (KindAccess, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range s.caps.Kinds {
		if k.Resource == resource {
			return k, true
		}
	}
	return KindAccess{}, false
}

// Denies reports whether any of k's permissions is denied.
func (k KindAccess) Denies() bool {
	return !k.Observe.Allowed || !k.Requeue.Allowed || !k.Delete.Allowed || !k.Edit.Allowed
}
