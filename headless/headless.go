// Package headless is kroscope's second front end beside tui: the text
// and JSON printer of `kroscope run` and `kroscope demo --headless`. Like
// the TUI it reads only engine/state, through the engine's snapshots and
// change notifications.
package headless

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/termtext"
)

// Engine is what the printer needs of the engine (engine.Engine).
type Engine interface {
	Run(ctx context.Context) error
	Snapshot() *state.Snapshot
	Subscribe() (<-chan struct{}, func())
}

// Options configure Run.
type Options struct {
	// Output is "text" (default) or "json" (one object per line).
	Output string
	// ExitWhen is "" (run until interrupted), "active" (every instance
	// ACTIVE) or "idle" (nothing left to do right now).
	ExitWhen string
	// Timeout ends the run with an error when the exit condition has not
	// been met in time; 0 means no timeout.
	Timeout time.Duration
	// IdleFor is how long the engine must stay idle for ExitWhen "idle"
	// (default 2s).
	IdleFor time.Duration
}

// ExitError is Run's failure; ExitCode is the process exit status
// (1: an instance ended in ERROR/FAILED or the engine could not run, 2: timeout).
type ExitError struct {
	Code int
	Msg  string
}

func (e *ExitError) Error() string { return e.Msg }

// ExitCode returns the process exit status.
func (e *ExitError) ExitCode() int { return e.Code }

// Run runs e and writes one line per instance state transition (and
// per graph error) to w, until ctx is done or the exit condition holds. It
// returns an *ExitError when an instance ends in ERROR or FAILED, on timeout,
// or when the engine cannot run.
func Run(ctx context.Context, e Engine, w io.Writer, o Options) error {
	if err := o.check(); err != nil {
		return err
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	runErr := make(chan error, 1)
	go func() { runErr <- e.Run(runCtx) }()
	// finish stops the engine and waits for its graceful shutdown.
	finish := func(err error) error {
		stop()
		if rerr := <-runErr; rerr != nil && err == nil {
			err = &ExitError{Code: 1, Msg: termtext.Inert(rerr.Error())}
		}
		return err
	}
	var timeout <-chan time.Time
	if o.Timeout > 0 {
		t := time.NewTimer(o.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	changes, unsubscribe := e.Subscribe()
	defer unsubscribe()
	tick := time.NewTicker(250 * time.Millisecond) // idle is the absence of changes
	defer tick.Stop()
	p := &printer{w: w, json: o.Output == "json", last: map[state.InstanceKey]time.Time{}, graphErr: map[string]string{}}
	// Every snapshot is read through the boundary (state.Views): what the
	// printer writes, text or JSON, carries no terminal sequence of a
	// cluster's strings, and `jq -r` on the JSON shows them inert too.
	views := &state.Views{}
	snapshot := func() *state.Snapshot { return views.Snapshot(e.Snapshot()) }
	x := &exitWatch{o: o, idleSince: time.Now()}
	for {
		select {
		case <-ctx.Done():
			return finish(nil)
		case err := <-runErr:
			if err != nil {
				p.print(snapshot())
				return &ExitError{Code: 1, Msg: termtext.Inert(err.Error())}
			}
			return nil
		case <-timeout:
			snap := snapshot()
			p.print(snap)
			return finish(&ExitError{Code: 2, Msg: fmt.Sprintf("timed out after %s: %s", o.Timeout, summary(snap))})
		case <-changes:
		case <-tick.C:
		}
		snap := snapshot()
		p.print(snap)
		if done, err := x.check(snap); done {
			return finish(err)
		}
	}
}

// check refuses unknown options and fills in the defaults.
func (o *Options) check() error {
	switch o.Output {
	case "", "text", "json":
	default:
		return &ExitError{Code: 1, Msg: fmt.Sprintf("unknown output %q: use text or json", o.Output)}
	}
	switch o.ExitWhen {
	case "", "active", "idle":
	default:
		return &ExitError{Code: 1, Msg: fmt.Sprintf("unknown --exit-when %q: use active or idle", o.ExitWhen)}
	}
	if o.IdleFor <= 0 {
		o.IdleFor = 2 * time.Second
	}
	return nil
}

// exitWatch decides, snapshot by snapshot, whether the run is over.
type exitWatch struct {
	o            Options
	lastVersions string
	idleSince    time.Time
}

// check says whether to stop now, and with which error (nil: success).
func (x *exitWatch) check(snap *state.Snapshot) (bool, error) {
	if snap.Fatal != nil {
		return true, &ExitError{Code: 1, Msg: snap.Fatal.Title + ": " + snap.Fatal.Cause}
	}
	if !snap.Startup.Done {
		return false, nil
	}
	switch x.o.ExitWhen {
	case "active":
		return activeDone(snap)
	case "idle":
		v := versions(snap)
		busy := snap.Engine.QueueDepth > 0 || snap.Engine.BusyWorkers > 0 || unreconciled(snap)
		if v != x.lastVersions || busy {
			x.lastVersions = v
			x.idleSince = time.Now()
			return false, nil
		}
		if time.Since(x.idleSince) < x.o.IdleFor {
			return false, nil
		}
		if bad := failing(snap); len(bad) > 0 {
			return true, &ExitError{Code: 1, Msg: summary(snap)}
		}
		return true, nil
	}
	return false, nil
}

// activeDone: every instance settled, ACTIVE (success) or FAILED.
func activeDone(snap *state.Snapshot) (bool, error) {
	if len(snap.Instances) == 0 {
		return false, nil
	}
	settled, failed := true, false
	for _, in := range snap.Instances {
		switch in.State {
		case reconciler.InstanceStateActive:
		case reconciler.InstanceStateFailed:
			failed = true
		default:
			settled = false
		}
	}
	switch {
	case !settled:
		return false, nil
	case failed:
		return true, &ExitError{Code: 1, Msg: summary(snap)}
	}
	return true, nil
}

// versions fingerprints the instances so idleness can be detected.
func versions(s *state.Snapshot) string {
	var b strings.Builder
	for _, in := range s.Instances {
		fmt.Fprintf(&b, "%s=%d;", in.Key, in.Version)
	}
	return b.String()
}

func unreconciled(s *state.Snapshot) bool {
	for _, in := range s.Instances {
		if in.State == "" {
			return true
		}
	}
	return false
}

func failing(s *state.Snapshot) []*state.Instance {
	var out []*state.Instance
	for _, in := range s.Instances {
		if in.State == reconciler.InstanceStateError || in.State == reconciler.InstanceStateFailed {
			out = append(out, in)
		}
	}
	return out
}

// summary says how many instances are ACTIVE and what holds the others.
func summary(s *state.Snapshot) string {
	active := 0
	var others []string
	for _, in := range s.Instances {
		if in.State == reconciler.InstanceStateActive {
			active++
			continue
		}
		st := in.State
		if st == "" {
			st = "not reconciled"
		}
		line := fmt.Sprintf("%s is %s", in.Key, st)
		if in.Message != "" {
			line += ": " + in.Message
		}
		others = append(others, line)
	}
	for _, g := range s.Graphs {
		if g.Err != "" {
			others = append(others, fmt.Sprintf("graph %s: %s", g.Name, g.Err))
		}
	}
	out := fmt.Sprintf("%d of %d instances ACTIVE", active, len(s.Instances))
	if len(others) > 0 {
		out += "; " + strings.Join(others, "; ")
	}
	return out
}

// printer writes each transition once.
type printer struct {
	w        io.Writer
	json     bool
	last     map[state.InstanceKey]time.Time // last printed transition per instance
	graphErr map[string]string
	fatal    bool
	// present is print's scratch set, kept between calls: print runs on
	// every change, and a new map per call was a tenth of all the demo's
	// allocation at 1,000 instances.
	present map[state.InstanceKey]bool
}

type jsonLine struct {
	Time      time.Time `json:"time"`
	Event     string    `json:"event"` // "transition", "removed", "graph-error", "fatal"
	Instance  string    `json:"instance,omitempty"`
	Resource  string    `json:"resource,omitempty"`
	Namespace string    `json:"namespace,omitempty"`
	Name      string    `json:"name,omitempty"`
	Graph     string    `json:"graph,omitempty"`
	From      string    `json:"from,omitempty"`
	To        string    `json:"to,omitempty"`
	Message   string    `json:"message,omitempty"`
	Duration  string    `json:"reconcileDuration,omitempty"`
}

func (p *printer) print(s *state.Snapshot) {
	if s.Fatal != nil && !p.fatal {
		p.fatal = true
		p.emit(jsonLine{Time: time.Now(), Event: "fatal", Message: s.Fatal.Title + ": " + s.Fatal.Cause + " (" + s.Fatal.Hint + ")"})
	}
	for _, g := range s.Graphs {
		if g.Err != "" && p.graphErr[g.Name] != g.Err {
			p.graphErr[g.Name] = g.Err
			p.emit(jsonLine{Time: time.Now(), Event: "graph-error", Graph: g.Name, Message: g.Err})
		}
	}
	if p.present == nil {
		p.present = map[state.InstanceKey]bool{}
	}
	present := p.present
	clear(present)
	for _, in := range s.Instances {
		present[in.Key] = true
		last := p.last[in.Key]
		for _, t := range in.History {
			if !t.At.After(last) {
				continue
			}
			p.emit(jsonLine{Time: t.At, Event: "transition", Instance: in.Key.String(), Resource: in.Key.Resource,
				Namespace: in.Key.Namespace, Name: in.Key.Name, Graph: in.Graph, From: t.From, To: t.To,
				Message: t.Message, Duration: t.Duration.Round(time.Millisecond).String()})
			p.last[in.Key] = t.At
		}
	}
	var gone []state.InstanceKey
	for k := range p.last {
		if !present[k] {
			gone = append(gone, k)
		}
	}
	slices.SortFunc(gone, func(a, b state.InstanceKey) int { return strings.Compare(a.String(), b.String()) })
	for _, k := range gone {
		delete(p.last, k)
		p.emit(jsonLine{Time: time.Now(), Event: "removed", Instance: k.String(), Resource: k.Resource, Namespace: k.Namespace, Name: k.Name})
	}
}

func (p *printer) emit(l jsonLine) {
	if p.json {
		b, _ := json.Marshal(l)
		fmt.Fprintf(p.w, "%s\n", b)
		return
	}
	ts := l.Time.Format("15:04:05.000")
	switch l.Event {
	case "transition":
		from := l.From
		if from == "" {
			from = "-"
		}
		line := fmt.Sprintf("%s %s %s -> %s", ts, l.Instance, from, l.To)
		if l.Message != "" {
			line += ": " + l.Message
		}
		fmt.Fprintf(p.w, "%s (%s)\n", line, l.Duration)
	case "removed":
		fmt.Fprintf(p.w, "%s %s removed\n", ts, l.Instance)
	case "graph-error":
		fmt.Fprintf(p.w, "%s graph %s: %s\n", ts, l.Graph, l.Message)
	case "fatal":
		fmt.Fprintf(p.w, "%s fatal: %s\n", ts, l.Message)
	}
}
