package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/internal/residency"
	"github.com/kroscope/kroscope/reconciler"
)

// The restart mode (-restart): the -n instances exist and converged before
// this process started (an earlier benchengine made them). Nothing is
// created and stdin is not read; every request is counted from the
// process's start. It sends
//
//	{"event":"verified",...}  every instance reconciled once by this process, and ACTIVE
//	{"event":"window",...}    -window after the process started: what it sent and saw
//
// and exits.

// Verified is the restart mode's "verified" message. Times are Unix
// nanoseconds.
type Verified struct {
	Event string `json:"event"`
	// Started is when main began; Served when the graph was served and
	// Leased when this process held the Lease (both first seen by polling
	// every 100 ms).
	Started, Served, Leased int64
	// Verified is the latest LastReconcile of the instances once every one
	// had a reconcile in this process and was ACTIVE (an instance
	// reconciled twice by then counts its second).
	Verified int64
	// CPU is the process's CPU time (ns) from its start to Verified's poll.
	CPU int64 `json:"cpu"`
	// MeanBusy and MeanQueue are the busy workers and the queue depth,
	// averaged over the polls from the Lease to all verified; Workers is
	// the worker count.
	MeanBusy, MeanQueue float64
	Workers             int
	// ReconcileP50 and ReconcileP99 are the instances' last reconcile
	// durations (ns), once all were verified: each one's first, unless it
	// was reconciled again by then.
	ReconcileP50, ReconcileP99 int64
}

// Window is the restart mode's "window" message.
type Window struct {
	Event string `json:"event"`
	// Counts are the requests of the whole window, from the process's start.
	Counts     Counts `json:"counts"`
	Reconciles int64  `json:"reconciles"`
	// Transitions counts the state changes after each instance's first
	// state in this process (the first reconcile sets it: not a change);
	// FirstTransitions names a few.
	Transitions      int      `json:"transitions"`
	FirstTransitions []string `json:"firstTransitions,omitempty"`
	// States counts the instances by state at the window's end.
	States map[string]int `json:"states"`
	CPU    int64          `json:"cpu"`
	VmHWM  int64          `json:"vmHWM"`
}

// started is when the process began, for the restart mode's clock.
var started = time.Now()

type restartOpts struct {
	n       int
	window  time.Duration
	timeout time.Duration
	cpuProf string // from the process's start to all verified
}

func runRestart(e *engine.Engine, c *counter, out *json.Encoder, o restartOpts) error {
	if o.cpuProf != "" {
		f, err := os.Create(o.cpuProf)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	v := Verified{Event: "verified", Started: started.UnixNano()}
	var res string
	if err := wait(e, o.timeout, "graph served and lease held", func(s *state.Snapshot) bool {
		for _, g := range s.Graphs {
			if g.Served && v.Served == 0 {
				v.Served, res = time.Now().UnixNano(), g.Resource
			}
		}
		if s.Mode.Reconciling && v.Leased == 0 {
			v.Leased = time.Now().UnixNano()
		}
		return v.Served != 0 && v.Leased != 0
	}); err != nil {
		return err
	}
	residency.Release() // as kroscope's long-running commands do once ready
	var samples, busy, queued int
	var took []time.Duration
	if err := wait(e, o.timeout, fmt.Sprintf("%d instances verified", o.n), func(s *state.Snapshot) bool {
		samples++
		busy += s.Engine.BusyWorkers
		queued += s.Engine.QueueDepth
		v.Workers = s.Engine.Workers
		k, last := 0, time.Time{}
		took = took[:0]
		for _, in := range s.Instances {
			if in.Key.Resource != res || in.Reconciles < 1 || in.State != reconciler.InstanceStateActive {
				continue
			}
			k++
			took = append(took, in.LastDuration)
			if in.LastReconcile.After(last) {
				last = in.LastReconcile
			}
		}
		v.Verified = last.UnixNano()
		return k == o.n
	}); err != nil {
		return err
	}
	v.MeanBusy, v.MeanQueue = float64(busy)/float64(samples), float64(queued)/float64(samples)
	slices.Sort(took)
	if len(took) > 0 {
		v.ReconcileP50, v.ReconcileP99 = int64(took[len(took)/2]), int64(took[len(took)*99/100])
	}
	v.CPU = int64(processCPU())
	if o.cpuProf != "" {
		pprof.StopCPUProfile()
	}
	if err := out.Encode(v); err != nil {
		return err
	}
	time.Sleep(time.Until(started.Add(o.window)))
	return out.Encode(windowOf(e.Snapshot(), res, c))
}

// windowOf is the "window" message from the state at the window's end.
func windowOf(s *state.Snapshot, res string, c *counter) Window {
	w := Window{Event: "window", Counts: c.take(), Reconciles: s.Engine.Reconciles, States: map[string]int{}}
	for _, in := range s.Instances {
		if in.Key.Resource != res {
			continue
		}
		w.States[in.State]++
		for i, t := range in.History {
			if i == 0 && t.From == "" {
				continue
			}
			w.Transitions++
			if len(w.FirstTransitions) < 5 {
				w.FirstTransitions = append(w.FirstTransitions, fmt.Sprintf("%s: %q -> %s (%s)", in.Key.Name, t.From, t.To, t.Message))
			}
		}
	}
	w.CPU, w.VmHWM = int64(processCPU()), vmHWM()
	return w
}
