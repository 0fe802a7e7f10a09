package tui

import (
	"slices"
	"strings"

	"github.com/kroscope/kroscope/engine/state"
)

// sortedRows keeps every instance of a snapshot in the table's order, so the
// next snapshot, in which usually a few instances changed and none came or
// went, costs one pass over pointers instead of a sort: at 10,000 instances
// a sort per frame was most of the time a key press waited for.
type sortedRows struct {
	from     *state.Snapshot
	by       sortKey
	desc     bool
	rollout  bool // a graph's rollout runs: failures first (state.Rollout)
	all      []rowItem
	pos      map[state.InstanceKey]int
	natCache map[state.InstanceKey]string
}

// rowItem is one instance with its name order precomputed.
type rowItem struct {
	in  *state.Instance
	nat string // natKey of the instance key
}

// update brings the order up to date with snap.
func (s *sortedRows) update(snap *state.Snapshot, by sortKey, desc bool) {
	rollout := rollingOut(snap)
	if s.from != nil && s.by == by && s.desc == desc && s.rollout == rollout && len(s.from.Instances) == len(snap.Instances) && s.patch(snap) {
		s.from = snap
		return
	}
	s.from, s.by, s.desc, s.rollout = snap, by, desc, rollout
	if s.natCache == nil || len(s.natCache) > 2*len(snap.Instances)+64 {
		s.natCache = make(map[state.InstanceKey]string, len(snap.Instances))
	}
	s.all = s.all[:0]
	for _, in := range snap.Instances {
		nat, ok := s.natCache[in.Key]
		if !ok {
			nat = natKey(in.Key)
			s.natCache[in.Key] = nat
		}
		s.all = append(s.all, rowItem{in: in, nat: nat})
	}
	s.sort()
}

// patch swaps in the changed instances of snap when its instances are the
// previous ones; false when a full rebuild is needed.
func (s *sortedRows) patch(snap *state.Snapshot) bool {
	var changed []int
	for i, in := range snap.Instances {
		old := s.from.Instances[i]
		if old == in {
			continue
		}
		if old.Key != in.Key {
			return false
		}
		j := s.pos[in.Key]
		s.all[j].in = in
		changed = append(changed, j)
	}
	for _, j := range changed {
		if (j > 0 && s.cmp(s.all[j-1], s.all[j]) > 0) || (j+1 < len(s.all) && s.cmp(s.all[j], s.all[j+1]) > 0) {
			s.sort() // a changed instance moved: its state or times are the order
			return true
		}
	}
	return true
}

func (s *sortedRows) sort() {
	slices.SortFunc(s.all, s.cmp) // keys are unique: the order is total
	if s.pos == nil || len(s.pos) > 2*len(s.all)+64 {
		s.pos = make(map[state.InstanceKey]int, len(s.all))
	}
	for i, it := range s.all {
		s.pos[it.in.Key] = i
	}
}

// rollingOut reports whether a graph's rollout runs in snap.
func rollingOut(snap *state.Snapshot) bool {
	for i := range snap.Graphs {
		if snap.Graphs[i].Status.Rollout.Running() {
			return true
		}
	}
	return false
}

// cmp is the table's order: failures first while a rollout runs, then the
// chosen column, then the name.
func (s *sortedRows) cmp(a, b rowItem) int {
	if s.rollout {
		fa, fb := a.in.Phase().Class() == state.ClassFailed, b.in.Phase().Class() == state.ClassFailed
		if fa != fb {
			if fa {
				return -1
			}
			return 1
		}
	}
	c := 0
	switch s.by {
	case sortState:
		c = rank(a.in) - rank(b.in) // worst first
	case sortKind:
		c = strings.Compare(a.in.Kind, b.in.Kind)
	case sortAge:
		c = b.in.Created.Compare(a.in.Created) // youngest first, as AGE grows
	case sortLast:
		c = b.in.LastReconcile.Compare(a.in.LastReconcile) // most recent first
	}
	if c == 0 {
		c = strings.Compare(a.nat, b.nat)
	}
	if s.desc {
		c = -c
	}
	return c
}

// natKey encodes an instance key so that comparing two encodings as bytes
// orders them as compareNames does (namespace, then name, naturally, then
// resource): each run of digits becomes '0', its significant length and its
// significant digits, so numbers compare by value and a number still sorts
// against a letter as a digit does.
func natKey(k state.InstanceKey) string {
	var b strings.Builder
	b.Grow(len(k.Namespace) + len(k.Name) + len(k.Resource) + 8)
	natAppend(&b, k.Namespace)
	b.WriteByte(0)
	natAppend(&b, k.Name)
	b.WriteByte(0)
	b.WriteString(k.Resource)
	return b.String()
}

func natAppend(b *strings.Builder, s string) {
	for s != "" {
		d := digits(s)
		if d == 0 {
			b.WriteByte(s[0])
			s = s[1:]
			continue
		}
		num := strings.TrimLeft(s[:d], "0")
		b.WriteByte('0')
		b.WriteByte(byte(min(len(num), 255)))
		b.WriteString(num)
		s = s[d:]
	}
}

// phaseTally is how many rows show each phase, in the counts line's order.
type phaseTally struct {
	order []state.Phase
	n     map[state.Phase]int
}

func tally(rows []*state.Instance) phaseTally {
	t := phaseTally{n: map[state.Phase]int{}}
	for _, in := range rows {
		ph := in.Phase()
		if t.n[ph] == 0 {
			t.order = append(t.order, ph)
		}
		t.n[ph]++
	}
	slices.SortFunc(t.order, func(a, b state.Phase) int {
		if a.Class() != b.Class() {
			return int(a.Class()) - int(b.Class())
		}
		return strings.Compare(string(a), string(b))
	})
	return t
}
