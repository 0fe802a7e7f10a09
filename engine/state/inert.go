package state

import (
	"sync"

	"github.com/kroscope/kroscope/termtext"
)

// Views is the boundary between cluster text and what a front end shows:
// it hands out snapshots in which every string (names, messages,
// conditions, errors, log lines, a graph's definition) is inert
// (termtext.Deep): no control character, escape sequence or
// bidirectional override of an instance, an Event or a graph reaches a
// frame or a line of output as it is. The TUI and the headless printer
// read every snapshot through one.
//
// An instance is converted once per value: the store replaces an
// instance to change it, so an unchanged pointer is an unchanged
// instance, and a frame at 10,000 instances converts only the few that
// changed. The zero value is ready to use; it is safe for concurrent use.
type Views struct {
	mu   sync.Mutex
	in   *Snapshot
	out  *Snapshot
	inst map[*Instance]*Instance
}

// Snapshot returns s made inert. s is not changed; the result shares
// every part of s that needed no escaping.
func (v *Views) Snapshot(s *Snapshot) *Snapshot {
	if s == nil {
		return nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if s == v.in {
		return v.out
	}
	out := *s
	out.Cluster = termtext.Deep(s.Cluster)
	out.Mode = termtext.Deep(s.Mode)
	out.Startup = termtext.Deep(s.Startup)
	out.Fatal = termtext.Deep(s.Fatal)
	out.Capabilities = termtext.Deep(s.Capabilities)
	out.Watches = termtext.Deep(s.Watches)
	out.Graphs = termtext.Deep(s.Graphs)
	out.Logs = termtext.Deep(s.Logs)
	out.Instances = v.instances(s.Instances)
	v.in, v.out = s, &out
	return &out
}

// instances converts each instance not converted before.
func (v *Views) instances(ins []*Instance) []*Instance {
	if v.inst == nil || len(v.inst) > 2*len(ins)+64 {
		// Forget the instances that went (or changed) since.
		old := v.inst
		v.inst = make(map[*Instance]*Instance, len(ins))
		for _, in := range ins {
			if o, ok := old[in]; ok {
				v.inst[in] = o
			}
		}
	}
	var prevIn, prevOut []*Instance
	if v.in != nil {
		prevIn, prevOut = v.in.Instances, v.out.Instances
	}
	out := make([]*Instance, len(ins))
	for i, in := range ins {
		// Most frames change few instances and move none: the same place
		// in the last snapshot answers without a map lookup.
		if i < len(prevIn) && prevIn[i] == in {
			out[i] = prevOut[i]
			continue
		}
		o, ok := v.inst[in]
		if !ok {
			o = termtext.Deep(in)
			v.inst[in] = o
		}
		out[i] = o
	}
	return out
}
