package client

import (
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// memoMapper answers RESTMapping for a kind (at most one version asked)
// from memory after the first time, until Reset. client-go's discovery
// mapper works the answer out on every call, through every group's mapper
// in priority order with a NoMatch error made and tested per miss: 6 % of
// kroscope's allocations in the chain benchmark (a mapping per child per
// reconcile), for an answer only a Reset (new kinds served) can change.
// Errors are not remembered: a miss makes the caller Reset and ask again.
type memoMapper struct {
	meta.ResettableRESTMapper

	mu  sync.RWMutex
	m   map[mappingKey]meta.RESTMapping
	gen uint64 // counts Resets: an answer worked out across one is not kept
}

type mappingKey struct {
	gk      schema.GroupKind
	version string
}

// memoize wraps m; nil stays nil (callers read a nil mapper as "none").
func memoize(m meta.ResettableRESTMapper) meta.ResettableRESTMapper {
	if m == nil {
		return nil
	}
	if _, done := m.(*memoMapper); done {
		return m
	}
	return &memoMapper{ResettableRESTMapper: m, m: map[mappingKey]meta.RESTMapping{}}
}

func (m *memoMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	if len(versions) > 1 {
		return m.ResettableRESTMapper.RESTMapping(gk, versions...)
	}
	k := mappingKey{gk: gk}
	if len(versions) == 1 {
		k.version = versions[0]
	}
	m.mu.RLock()
	got, ok := m.m[k]
	gen := m.gen
	m.mu.RUnlock()
	if ok {
		return &got, nil // a copy: the caller may change it
	}
	mapping, err := m.ResettableRESTMapper.RESTMapping(gk, versions...)
	if err != nil || mapping == nil {
		return mapping, err
	}
	m.mu.Lock()
	if m.gen == gen {
		m.m[k] = *mapping
	}
	m.mu.Unlock()
	return mapping, nil
}

// Reset resets the mapper underneath, then forgets every answer: one
// worked out before the Reset is either forgotten here or, finished later,
// not kept (gen moved on).
func (m *memoMapper) Reset() {
	m.ResettableRESTMapper.Reset()
	m.mu.Lock()
	clear(m.m)
	m.gen++
	m.mu.Unlock()
}
