package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kroscope/kroscope/engine/state"
)

// The status line, the watch alarm and the two screens shown before the
// engine runs (startup, fatal) are pure functions of the snapshot.

// statusLine is the top bar: where, what the list shows (its namespace,
// kind or graph, as `:ns`, `:kind` and `:graph` set them), mode, queue,
// rate, watches; waiting is the instances in progress or waiting (counted
// by the feed, once a snapshot).
func statusLine(c *common, s *state.Snapshot, w int, v viewScope, waiting int) string {
	th := c.th
	sep := th.Dim.Render(" " + th.G.Sep + " ")
	where := s.Cluster.Context
	if s.Cluster.Demo {
		where = "demo"
	}
	if where == "" {
		where = "cluster"
	}
	if s.Cluster.Server != "" && w >= 120 {
		where += " (" + s.Cluster.Server + ")"
	}
	narrow := w < 120
	ns := s.Cluster.Namespace
	if v.ns != "" {
		ns = v.ns
	}
	switch {
	case ns == "" && narrow:
		ns = "all ns"
	case ns == "":
		ns = "all namespaces"
	default:
		ns = "ns " + ns
	}
	if v.what != "" {
		ns += " " + th.G.Sep + " " + v.what
	}
	detail := activityWord // the figures have columns of their own
	if narrow {
		detail = activityQueue
	}
	mode := th.ClassStyle(state.ClassOK).Render(th.G.Dot + " " + idleOr(activity(s.Engine, detail), waiting))
	if !s.Mode.Reconciling {
		mode = th.Warn.Render(th.G.Dot + " " + notReconciling(s, narrow))
	}
	watches, alarm := watchSummary(s.Watches)
	if alarm {
		watches = th.Loud.Render(" " + th.G.Warn + " " + watches + " ")
	}
	parts := []string{th.Title.Render("kroscope"), where, ns, mode}
	if !narrow {
		parts = append(parts, fmt.Sprintf("queue %d", s.Engine.QueueDepth))
		if showsRate(s.Engine) {
			parts = append(parts, fmt.Sprintf("%.1f rec/s", s.Engine.ReconcilesPerSecond))
		}
	}
	if w >= 140 && s.Engine.Workers > 0 {
		parts = append(parts, fmt.Sprintf("workers %d/%d", s.Engine.BusyWorkers, s.Engine.Workers))
	}
	parts = append(parts, watches)
	if s.Engine.APIErrors > 0 {
		parts = append(parts, th.ClassStyle(state.ClassFailed).Render(fmt.Sprintf("api errors %d", s.Engine.APIErrors)))
	}
	line := strings.Join(parts, sep)
	if narrow && s.Mode.Reconciling {
		// Too long: the activity drops its queue, then its rate, before
		// the line is cut.
		for detail := activityRate; ansi.StringWidth(line) > w && detail >= activityWord; detail-- {
			parts[3] = th.ClassStyle(state.ClassOK).Render(th.G.Dot + " " + idleOr(activity(s.Engine, detail), waiting))
			line = strings.Join(parts, sep)
		}
	}
	return clip(line, w, th.G.Ellipsis)
}

// notReconciling says why this engine does not reconcile: observing (and
// who holds the Lease, or that this user cannot tell) or attached to the
// holder.
func notReconciling(s *state.Snapshot, narrow bool) string {
	who := s.Mode.Holder
	if who == "" {
		who = "nobody"
	}
	switch {
	case s.Mode.Forced:
		return "observing (--observe)"
	case s.Mode.Kro != "":
		return "observing (kro reconciles)"
	case s.Mode.Ask != "":
		return "observing until you say yes (W)"
	case s.Mode.Attached && s.Mode.Holder == "" && narrow:
		return "attached"
	case s.Mode.Attached && s.Mode.Holder == "":
		// This user may not read the Lease: actions go to the API
		// server, for whoever holds it.
		return "attached (no access to the lease)"
	case s.Mode.Attached && s.Mode.HolderExpired:
		return "attached to " + who + ", lease expired"
	case s.Mode.Attached:
		return "attached to " + who
	case s.Mode.Holder == "" && s.Capabilities.Lease != "" && narrow:
		return "observing"
	case s.Mode.Holder == "" && s.Capabilities.Lease != "":
		// This user may not read the Lease: who holds it is unknown,
		// not "nobody".
		return "observing (no access to the lease)"
	case narrow:
		return "observing (" + who + ")"
	}
	return "observing, lease held by " + who
}

// How much the activity says: the word, then its rate, then its queue.
// showsRate says whether the header shows the reconcile rate: only while
// reconciling. The rate is over the last seconds, so "idle │ 0.2 rec/s"
// (or "idle 3.3 rec/s") reads as a contradiction.
func showsRate(e state.Engine) bool { return e.Busy() && e.ReconcilesPerSecond >= 0.05 }

const (
	activityWord = iota
	activityRate
	activityQueue
)

// activity is the engine's work in a few words: reconciling or idle (a
// reconcile since the previous figures counts, however short) and, where
// the figures have no columns of their own, the rate and queue in words,
// so "q 0 │ 0.0/s" never reads like a key hint.
func activity(e state.Engine, detail int) string {
	word := "idle"
	if e.Busy() {
		word = "reconciling"
	}
	if detail >= activityRate && showsRate(e) {
		word += fmt.Sprintf(" %.1f rec/s", e.ReconcilesPerSecond)
	}
	if detail >= activityQueue && e.QueueDepth > 0 {
		word += fmt.Sprintf(", %d queued", e.QueueDepth)
	}
	return word
}

// idleOr: "idle" while instances wait on readiness read as if all
// were done; the engine waits on them (n of them).
func idleOr(word string, n int) string {
	if n == 0 || !strings.HasPrefix(word, "idle") {
		return word
	}
	return "waiting on " + plural(n, "instance") + strings.TrimPrefix(word, "idle")
}

// watchSummary counts the watches in one phrase and says whether it is an
// alarm: "watches 12/12" once all are synced, "watches 4/12 synced" while
// they list, "watches 10/12 healthy" when some fail. A watch this user may
// not read is counted apart: the access line names it.
func watchSummary(ws []state.Watch) (string, bool) {
	synced, healthy, forbidden := 0, 0, 0
	for _, wt := range ws {
		switch {
		case wt.Forbidden:
			forbidden++
			continue
		case wt.Synced:
			synced++
		}
		if wt.Healthy {
			healthy++
		}
	}
	total := len(ws) - forbidden
	out := fmt.Sprintf("watches %d/%d", synced, total)
	switch {
	case healthy < total:
		out = fmt.Sprintf("watches %d/%d healthy", healthy, total)
		if synced < total {
			out += fmt.Sprintf(", %d/%d synced", synced, total)
		}
	case synced < total:
		out += " synced"
	}
	if forbidden > 0 {
		out += fmt.Sprintf(" (%d no access)", forbidden)
	}
	return out, healthy < total
}

// kroLine says, while kro's controller runs on the cluster, why kroscope
// only observes and how to make it reconcile.
func kroLine(c *common, snap *state.Snapshot, w int) string {
	if snap == nil {
		return ""
	}
	// One line for who writes: kro, another kroscope, or the question
	// asked before this one writes with the user's credentials.
	line := snap.Mode.Kro
	if line == "" {
		line = snap.Mode.Writer
	}
	if line == "" {
		line = snap.Mode.Ask
	}
	if line == "" {
		return ""
	}
	return c.th.Warn.Render(fit(" "+c.th.G.Warn+" "+line, w, c.th.G.Ellipsis))
}

// accessLine says what this user may do when that is less than
// everything: the capabilities the engine checked, the kinds whose watch
// the API server refuses, and the graphs served without reading their CRD.
// "" for a user with full rights (and in the demo).
func accessLine(c *common, snap *state.Snapshot, w int) string {
	if snap == nil {
		return ""
	}
	th := c.th
	var parts []string
	caps := snap.Capabilities
	if sum := caps.Summary(); strings.Contains(sum, "cannot") || strings.Contains(sum, "some kinds") {
		who := caps.User
		if who == "" {
			who = "this user"
		}
		parts = append(parts, who+" "+sum)
	}
	if caps.Lease != "" {
		// Attached, the user's actions still reach the API server; only
		// reconciling is out of reach.
		word := "observing: "
		if snap.Mode.Attached {
			word = "not reconciling: "
		}
		parts = append(parts, word+caps.Lease)
	}
	var denied []string
	for _, wt := range snap.Watches {
		if wt.Forbidden {
			denied = append(denied, wt.NoAccess())
		}
	}
	if len(denied) > 0 {
		parts = append(parts, "no access: "+strings.Join(denied, ", "))
	}
	for _, g := range snap.Graphs {
		if g.Note != "" {
			parts = append(parts, "CRD checks skipped (no cluster rights)")
			break
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return th.Warn.Render(fit(" "+th.G.Warn+" "+strings.Join(parts, " "+th.G.Sep+" "), w, th.G.Ellipsis))
}

// watchAlarm is the loud line shown while any watch is broken.
func watchAlarm(c *common, snap *state.Snapshot, w int) string {
	var bad []string
	var since time.Time
	for _, wt := range snap.Watches {
		if !wt.Healthy && !wt.Forbidden { // no access is the access line's
			s := wt.Name
			if wt.Err != "" {
				s += ": " + wt.Err
			}
			bad = append(bad, s)
			if since.IsZero() || wt.Since.Before(since) {
				since = wt.Since
			}
		}
	}
	if len(bad) == 0 {
		return ""
	}
	s := fmt.Sprintf(" %s WATCH LOST %s ago %s %s, state may be stale", c.th.G.Warn, ago(c.now(), since), c.th.G.Sep, strings.Join(bad, "; "))
	return c.th.Loud.Render(fit(s, w, c.th.G.Ellipsis))
}
func fatalScreen(c *common, f *state.Fatal, tw, th0 int) string {
	th := c.th
	w := min(tw-4, 100)
	var b strings.Builder
	b.WriteString(th.ClassStyle(state.ClassFailed).Render(th.G.Error+" "+f.Title) + "\n\n")
	for _, l := range wrap(f.Cause, w-4) {
		b.WriteString(l + "\n")
	}
	if f.Hint != "" {
		b.WriteString("\n" + th.Bold.Render("What to do") + "\n")
		for _, l := range wrap(f.Hint, w-4) {
			b.WriteString(l + "\n")
		}
	}
	b.WriteString("\n" + th.Dim.Render(c.keys.label("quit")+" quits"))
	box := th.Dialog.Width(w).Render(b.String())
	return lipgloss.Place(tw, th0, lipgloss.Center, lipgloss.Center, box)
}

func startupScreen(c *common, snap *state.Snapshot, tw, th0 int) string {
	th, st := c.th, snap.Startup
	w := min(tw-4, 70)
	phase := st.Phase
	if phase == "" {
		phase = "connecting"
	}
	var b strings.Builder
	b.WriteString(th.Title.Render("kroscope") + " " + th.Dim.Render("starting") + "\n\n")
	line := th.State("IN_PROGRESS", "", c.frame) + " " + phase
	if st.Total > 0 {
		line += fmt.Sprintf(" %d/%d", st.Step, st.Total)
	}
	b.WriteString(line + "\n")
	if st.Total > 0 {
		barW := w - 12
		n := clamp(st.Step*barW/st.Total, 0, barW)
		b.WriteString(th.Bar.Render(strings.Repeat(th.G.BarFull, n)) + th.Dim.Render(strings.Repeat(th.G.BarEmpty, barW-n)) +
			fmt.Sprintf(" %3d%%", st.Step*100/st.Total) + "\n")
	}
	var waiting []string
	for _, wt := range snap.Watches {
		if !wt.Synced {
			waiting = append(waiting, wt.Name)
		}
	}
	if len(waiting) > 0 {
		b.WriteString("\n" + th.Dim.Render("waiting for:") + "\n")
		limit := max(th0-14, 1)
		for i, n := range waiting {
			if i == limit {
				b.WriteString(th.Dim.Render(fmt.Sprintf("  and %d more", len(waiting)-limit)) + "\n")
				break
			}
			b.WriteString("  " + th.ClassGlyph(state.ClassWaiting, 0) + " " + clip(n, w-6, th.G.Ellipsis) + "\n")
		}
	}
	where := snap.Cluster.Context
	if snap.Cluster.Server != "" {
		where += " " + snap.Cluster.Server
	}
	if strings.TrimSpace(where) != "" {
		b.WriteString("\n" + th.Dim.Render(clip(strings.TrimSpace(where), w-4, th.G.Ellipsis)))
	}
	box := th.Dialog.Width(w).Render(strings.TrimRight(b.String(), "\n"))
	return lipgloss.Place(tw, th0, lipgloss.Center, lipgloss.Center, box)
}
