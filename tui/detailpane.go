package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"github.com/aymanbagabas/go-udiff"
	"github.com/charmbracelet/x/ansi"
	"sigs.k8s.io/yaml"

	"github.com/kroscope/kroscope/engine/slim"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/plan"
	"github.com/kroscope/kroscope/theme"
)

// inspect renders the inspector for one resource, wrapped to w.
func inspect(th *theme.Theme, r *state.Resource, w int, now time.Time) []string {
	var out []string
	row := func(label, value string) {
		if value == "" {
			return
		}
		lw := 12
		ls := wrap(value, max(w-lw, 8))
		for i, l := range ls {
			if i == 0 {
				out = append(out, th.Label.Render(fit(label, lw, ""))+l)
			} else {
				out = append(out, strings.Repeat(" ", lw)+l)
			}
		}
	}
	out = append(out, th.Bold.Render(r.ID)+"  "+th.Dim.Render(r.APIVersion+" "+r.Kind))
	row("State", th.State(r.State, stateWord(r.State), 0))
	obj := r.Name
	if r.Namespace != "" {
		obj = r.Namespace + "/" + r.Name
	}
	if obj == "" {
		switch r.Phase().Class() {
		case state.ClassFailed:
			obj = "(not rendered: see the error)"
		case state.ClassSkipped:
			obj = "(not rendered: excluded by includeWhen)"
		default:
			obj = "(not rendered yet: its inputs are pending)"
		}
	}
	row("Object", obj)
	if r.External {
		row("External", "yes (read, never written or deleted)")
	}
	row("Needs", strings.Join(r.Dependencies, ", "))
	row("Why", reason(r))
	if len(r.ReadyChecks) > 0 {
		out = append(out, readyChecksView(th, r, w)...)
	} else {
		for _, e := range r.ReadyWhen {
			row("readyWhen", e)
		}
	}
	for _, e := range r.IncludeWhen {
		row("includeWhen", e)
	}
	if !r.FirstApplied.IsZero() {
		// When this engine first applied or found the object: an object
		// older than the engine (observing, attached, a restart) was not
		// applied then, so the row does not say "applied".
		seen := r.FirstApplied.Format("15:04:05") + " (" + ago(now, r.FirstApplied) + " ago)"
		row("First seen", seen)
	}
	if !r.Ready.IsZero() {
		row("Ready", r.Ready.Format("15:04:05")+" (after "+dur(r.Ready.Sub(r.FirstApplied))+")")
	}
	if r.LastError != nil {
		out = append(out, errorMemory(th, r.LastError, w, now)...)
	} else if r.Err != "" {
		out = append(out, "", th.ClassStyle(state.ClassFailed).Render("Error"))
		for _, l := range wrap(r.Err, max(w-2, 8)) {
			out = append(out, "  "+l)
		}
	}
	return out
}

func stateWord(s string) string { return state.Phase(s).Word() }

func isSecret(r *state.Resource) bool {
	return r.Kind == "Secret" && (r.APIVersion == "v1" || r.APIVersion == "")
}

// masked returns obj with the values of every Secret's data and
// stringData replaced (see maskSecrets), so they never reach the screen
// unless revealed; secret says obj is a Secret (or a list of them).
func masked(obj map[string]any, mask string, secret bool) map[string]any {
	if obj == nil {
		return nil
	}
	return maskSecrets(obj, mask, secret).(map[string]any)
}

func toYAML(obj map[string]any) string {
	if obj == nil {
		return ""
	}
	b, err := yaml.Marshal(obj)
	if err != nil {
		return "# cannot render as YAML: " + err.Error() + "\n"
	}
	return string(b)
}

// yamlView renders the desired or observed object, or their unified diff.
func yamlView(th *theme.Theme, r *state.Resource, mode yamlMode, reveal bool) []string {
	mask := "********"
	// The objects are kept encoded in the snapshot: decoded here, they come
	// through the intake like the rest of it (intake.go).
	desired, _ := inert(r.DesiredObject(), nil)
	observed, _ := inert(slim.WithoutManagedFields(r.ObservedObject()), nil)
	// Secrets are masked wherever they appear (a List's items, a nested
	// object, the last-applied annotation), so in the diff too; x reveals
	// the selected Secret only.
	if !(reveal && isSecret(r)) {
		desired, observed = masked(desired, mask, isSecret(r)), masked(observed, mask, isSecret(r))
	}
	var text string
	switch mode {
	case yamlDesired:
		text = toYAML(desired)
		if text == "" {
			return []string{th.Dim.Render("(no desired object: it cannot be rendered yet)")}
		}
	case yamlObserved:
		text = toYAML(observed)
		if text == "" {
			return []string{th.Dim.Render("(not observed in the cluster)")}
		}
	case yamlDiff:
		// What the server sets (uid, resourceVersion, managedFields, the
		// status...) is left out by the one decision `kroscope plan`
		// makes: what is left is drift.
		a, b := toYAML(plan.Normalize(desired)), toYAML(plan.Normalize(observed))
		d := udiff.Unified("desired", "observed", a, b)
		if d == "" {
			return []string{th.Dim.Render("(no difference, leaving out what the server sets: metadata bookkeeping and the status)")}
		}
		var out []string
		for _, l := range strings.Split(strings.TrimRight(d, "\n"), "\n") {
			switch {
			case strings.HasPrefix(l, "@@"):
				out = append(out, th.DiffHunk.Render(l))
			case strings.HasPrefix(l, "+"):
				out = append(out, th.DiffAdd.Render(l))
			case strings.HasPrefix(l, "-"):
				out = append(out, th.DiffDel.Render(l))
			default:
				out = append(out, l)
			}
		}
		return out
	}
	return strings.Split(strings.TrimRight(text, "\n"), "\n")
}

// history renders the instance's transitions, newest first.
func history(th *theme.Theme, in *state.Instance, w int) []string {
	if len(in.History) == 0 {
		return []string{th.Dim.Render("(no state change recorded yet)")}
	}
	out := []string{th.Header.Render(fit("TIME      FROM         TO           TOOK    MESSAGE", w, ""))}
	for i := len(in.History) - 1; i >= 0; i-- {
		h := in.History[i]
		from := h.From
		if from == "" {
			from = "-"
		}
		head := h.At.Format("15:04:05") + "  " + fit(from, 12, th.G.Ellipsis) + " " +
			th.Style(h.To).Render(fit(h.To, 12, th.G.Ellipsis)) + " " + fit(dur(h.Duration), 7, "") + " "
		// The message wraps under itself: cut, it could not be read.
		out = append(out, hang(head, 44, strings.ReplaceAll(h.Message, "\n", " "), w)...)
	}
	return out
}

// timeline draws, per resource, a bar from its first apply to ready on a
// shared time axis, so the slow resource of a rollout stands out.
func timeline(th *theme.Theme, in *state.Instance, w int, now time.Time) []string {
	t0, t1, open := rolloutSpan(in.Resources, now)
	if t0.IsZero() {
		return []string{th.Dim.Render("(nothing applied yet)")}
	}
	sc := timelineScale{t0: t0, span: t1.Sub(t0), idW: 4, durW: 7}
	if sc.span <= 0 {
		sc.span = time.Millisecond
	}
	for _, r := range in.Resources {
		sc.idW = max(sc.idW, len(r.ID))
	}
	sc.idW = min(sc.idW, max(w/4, 8))
	sc.barW = max(w-sc.idW-sc.durW-4, 10)
	slow, slowD := slowest(in.Resources, now)
	out := []string{th.Header.Render(fit(fmt.Sprintf("ROLLOUT from %s, %s", t0.Format("15:04:05"), dur(sc.span)), w, ""))}
	for _, r := range in.Resources {
		out = append(out, sc.row(th, r, now, r.ID == slow && len(in.Resources) > 1))
	}
	axis := strings.Repeat(" ", sc.idW+2) + fit("0s", sc.barW/2, "") + fmt.Sprintf("%*s", sc.barW-sc.barW/2, dur(sc.span))
	out = append(out, th.Dim.Render(axis))
	if slow != "" && len(in.Resources) > 1 {
		note := "slowest: " + slow + " (" + dur(slowD) + ")"
		if open {
			note += ", " + rolloutState(in)
		}
		out = append(out, th.Warn.Render(note))
	}
	return out
}

// rolloutSpan is when the first resource was applied and when the last
// became ready; a resource not ready yet ends now, and open says so. t0 is
// zero when nothing was applied.
func rolloutSpan(rs []state.Resource, now time.Time) (t0, t1 time.Time, open bool) {
	for _, r := range rs {
		if r.FirstApplied.IsZero() {
			continue
		}
		if t0.IsZero() || r.FirstApplied.Before(t0) {
			t0 = r.FirstApplied
		}
		end := r.Ready
		if end.IsZero() {
			end, open = now, true
		}
		if end.After(t1) {
			t1 = end
		}
	}
	return t0, t1, open
}

// slowest is the resource that took longest from its first apply to
// ready (till now for one not ready yet), and how long.
func slowest(rs []state.Resource, now time.Time) (string, time.Duration) {
	slow, slowD := "", time.Duration(0)
	for _, r := range rs {
		if r.FirstApplied.IsZero() {
			continue
		}
		end := r.Ready
		if end.IsZero() {
			end = now
		}
		if d := end.Sub(r.FirstApplied); d > slowD {
			slow, slowD = r.ID, d
		}
	}
	return slow, slowD
}

// timelineScale maps the rollout's span onto the bar columns.
type timelineScale struct {
	t0              time.Time
	span            time.Duration
	idW, barW, durW int
}

func (sc timelineScale) col(t time.Time) int {
	return clamp(int(float64(t.Sub(sc.t0))/float64(sc.span)*float64(sc.barW)), 0, sc.barW)
}

// row is one resource's line: its id, a bar from its first apply to ready
// (to now, in its state's colour, while not ready; the slowest in warning
// colour) and how long that took.
func (sc timelineScale) row(th *theme.Theme, r state.Resource, now time.Time, slow bool) string {
	label := fit(r.ID, sc.idW, th.G.Ellipsis)
	if r.FirstApplied.IsZero() {
		return label + "  " + th.Dim.Render(fit("("+r.Phase().Phrase()+", not applied)", sc.barW+sc.durW+2, th.G.Ellipsis))
	}
	a := sc.col(r.FirstApplied)
	end, done := r.Ready, !r.Ready.IsZero()
	if !done {
		end = now
	}
	b := min(max(sc.col(end), a+1), sc.barW)
	a = min(a, b-1)
	st := th.Bar
	if !done {
		st = th.Style(r.State)
	}
	if slow {
		st = th.Warn
	}
	d := dur(end.Sub(r.FirstApplied))
	if !done {
		d += th.G.Ellipsis
		if th.ASCII {
			d = dur(end.Sub(r.FirstApplied)) + "+"
		}
	}
	bar := th.Dim.Render(strings.Repeat(th.G.BarEmpty, a)) + st.Render(strings.Repeat(th.G.BarFull, b-a)) + th.Dim.Render(strings.Repeat(th.G.BarEmpty, sc.barW-b))
	return label + "  " + bar + "  " + fit(d, sc.durW, "")
}

// rolloutState says why a rollout with resources not ready is open: still
// rolling out only while the instance progresses; a FAILED or ERROR one
// is stopped or retrying, not rolling out.
func rolloutState(in *state.Instance) string {
	switch in.Phase().Class() {
	case state.ClassFailed:
		if in.Phase() == state.PhaseError {
			return "held by an error (retrying; e shows it)"
		}
		return "stopped: the instance FAILED (e shows why)"
	case state.ClassDeleting:
		return "being deleted"
	case state.ClassSuspended:
		return "suspended"
	}
	return "still rolling out"
}

// logsView renders the last log lines that fit, oldest first, one row
// each. With match set, only lines that mention it (an instance's name)
// are kept.
func logsView(th *theme.Theme, logs []state.LogLine, match string, w, h int) []string {
	return logLines(th, logs, match, w, h, false)
}

// logLines is logsView; wrapped, each line's text wraps under itself
// (the Logs tab, which scrolls) instead of being cut.
func logLines(th *theme.Theme, logs []state.LogLine, match string, w, h int, wrapped bool) []string {
	var pick []state.LogLine
	for i := len(logs) - 1; i >= 0 && len(pick) < h; i-- {
		l := logs[i]
		if match != "" && !strings.Contains(l.Message, match) && !strings.Contains(l.KV, match) {
			continue
		}
		pick = append(pick, l)
	}
	if len(pick) == 0 {
		return []string{th.Dim.Render("(no log lines)")}
	}
	out := make([]string, 0, len(pick))
	for i := len(pick) - 1; i >= 0; i-- {
		l := pick[i]
		lvl := strings.ToUpper(l.Level)
		st := th.Dim
		switch l.Level {
		case "error":
			st = th.ClassStyle(state.ClassFailed)
		case "info":
			st = th.Accent
		}
		text := l.Message
		if l.KV != "" {
			text += " " + l.KV
		}
		head, text := l.At.Format("15:04:05")+" "+st.Render(fit(lvl, 5, ""))+" ", strings.ReplaceAll(text, "\n", " ")
		if wrapped {
			out = append(out, hang(head, 15, text, w)...)
			continue
		}
		out = append(out, head+clip(text, max(w-15, 1), th.G.Ellipsis))
	}
	return out
}

// detailTab is what the detail pane shows.
type detailTab int

const (
	tabInspect detailTab = iota
	tabYAML
	tabHistory
	tabTimeline
	tabLogs
	tabInstance
	numTabs
)

func (t detailTab) String() string {
	return [...]string{"Inspect", "YAML", "History", "Timeline", "Logs", "Instance"}[t]
}

// yamlMode is what the YAML tab shows; y cycles it.
type yamlMode int

const (
	yamlDesired yamlMode = iota
	yamlObserved
	yamlDiff
	numYAMLModes
)

func (y yamlMode) String() string { return [...]string{"desired", "observed", "diff"}[y] }

// revealKey names one Secret whose data the user chose to see.
type revealKey struct {
	inst state.InstanceKey
	id   string
}

// detailPane is the tab bar and the scrolled text of the selected node (or
// of the instance, for History, Timeline and Logs). Tabs change what it
// shows, never what j/k move.
type detailPane struct {
	c        *common
	tab      detailTab
	ymode    yamlMode
	vp       viewport.Model
	revealed map[revealKey]bool
	inst     instanceData // the Instance tab's object, conditions and Events

	w, h    int
	content contentKey
	lines   []string
	drawn   detailKey
}

// contentKey is what the viewport's text depends on.
type contentKey struct {
	inst    state.InstanceKey
	version uint64
	node    string
	tab     detailTab
	ymode   yamlMode
	w       int
	reveal  bool
	logs    int
	det     *state.InstanceDetail
	detErr  string
	detYAML bool
	th      *theme.Theme
	clock   int64 // the timeline runs to now
}

// sameView: only the data changed, so the scroll position is kept.
func (a contentKey) sameView(b contentKey) bool {
	return a.inst == b.inst && a.node == b.node && a.tab == b.tab && a.ymode == b.ymode && a.detYAML == b.detYAML
}

type detailKey struct {
	content contentKey
	off     int
	h       int
}

func newDetailPane(c *common) *detailPane {
	vp := viewport.New()
	vp.KeyMap = viewport.KeyMap{} // keys go through the action tables
	return &detailPane{c: c, vp: vp, revealed: map[revealKey]bool{}}
}

func (d *detailPane) SetSize(w, h int) {
	d.w, d.h = w, h
	d.vp.SetWidth(w)
	d.vp.SetHeight(max(h-1, 1))
}

func (d *detailPane) View() string { return strings.Join(d.lines, "\n") }

func (d *detailPane) setTab(t detailTab) { d.tab = t }

func (d *detailPane) scroll(n int) {
	if n < 0 {
		d.vp.ScrollUp(-n)
	} else {
		d.vp.ScrollDown(n)
	}
}

func (d *detailPane) page(n int) { d.scroll(n * max(d.h-2, 1)) }

// toEnd scrolls the detail to its end (the newest log line; the Logs tab
// follows from there) or, end false, its top (the oldest).
func (d *detailPane) toEnd(end bool) {
	if end {
		d.vp.GotoBottom()
	} else {
		d.vp.GotoTop()
	}
}

// Update takes clicks relative to the pane's top line (the tab bar).
func (d *detailPane) Update(msg tea.Msg) tea.Cmd {
	if c, ok := msg.(tea.MouseClickMsg); ok && c.Button == tea.MouseLeft && c.Y == 0 {
		d.clickTab(c.X)
	}
	return nil
}

// clickTab switches to the tab label under x.
func (d *detailPane) clickTab(x int) {
	sepW := ansi.StringWidth(" " + d.c.th.G.Sep + " ")
	pos := 0
	for t := detailTab(0); t < numTabs; t++ {
		w := ansi.StringWidth(d.c.th.Choice(d.tabLabel(t), t == d.tab, d.c.th.Selected, d.c.th.Dim))
		if x >= pos && x < pos+w {
			d.tab = t
			return
		}
		pos += w + sepW
	}
}

func (d *detailPane) tabLabel(t detailTab) string {
	if t == tabYAML && d.w >= d.tabsWidth() {
		return t.String() + " (" + d.ymode.String() + ")"
	}
	return t.String()
}

// tabsWidth is the tab bar's width with the YAML mode in its label: a
// narrower pane drops the mode rather than cut the last tab.
func (d *detailPane) tabsWidth() int {
	n := ansi.StringWidth(" (" + d.ymode.String() + ")")
	for t := detailTab(0); t < numTabs; t++ {
		n += ansi.StringWidth(t.String()) + ansi.StringWidth(" "+d.c.th.G.Sep+" ")
	}
	return n - ansi.StringWidth(" "+d.c.th.G.Sep+" ")
}

// prepare sets the viewport's text when what it shows changed, and draws.
func (d *detailPane) prepare(in *state.Instance, nodeID string, logs []state.LogLine) {
	k := contentKey{inst: in.Key, version: in.Version, node: nodeID, tab: d.tab, ymode: d.ymode, w: d.w,
		reveal: d.revealed[revealKey{in.Key, nodeID}], logs: len(logs), th: d.c.th}
	if d.tab == tabInstance {
		k.det, k.detErr, k.detYAML = d.inst.detail, d.inst.err, d.inst.yaml
	}
	switch d.tab {
	case tabTimeline:
		k.clock = d.c.now().UnixMilli()
	case tabInspect: // "cleared 3s ago", "next retry in 1.2s"
		k.clock = d.c.now().Unix()
	}
	if k != d.content || d.lines == nil {
		off := d.vp.YOffset()
		// Cut here, with an ellipsis: the viewport cuts without one.
		full := d.text(in, nodeID, logs)
		text := make([]string, len(full))
		for i, l := range full {
			text[i] = clip(l, d.w, d.c.th.G.Ellipsis)
		}
		atEnd := d.vp.AtBottom()
		d.vp.SetContentLines(text)
		switch {
		case d.tab == tabLogs && (!k.sameView(d.content) || d.lines == nil || atEnd):
			// Logs open on the newest line and follow it, as k9s tails,
			// until the user scrolls up.
			d.vp.GotoBottom()
		case d.lines != nil && k.sameView(d.content):
			d.vp.SetYOffset(off)
		default:
			d.vp.GotoTop()
		}
		d.content = k
	}
	dk := detailKey{content: d.content, off: d.vp.YOffset(), h: d.h}
	if dk == d.drawn && d.lines != nil {
		return
	}
	d.drawn = dk
	out := []string{d.tabBar()}
	out = append(out, withMoreBelow(&d.vp, d.c.th, d.w)...)
	d.lines = block(out, d.w, d.h, d.c.th.G.Ellipsis)
}

// text is the current tab's content.
func (d *detailPane) text(in *state.Instance, nodeID string, logs []state.LogLine) []string {
	th, w := d.c.th, d.w
	switch d.tab {
	case tabHistory:
		return history(th, in, w)
	case tabTimeline:
		return timeline(th, in, w, d.c.now())
	case tabLogs:
		return logLines(th, instanceLogs(in, logs), "", w, 500, true)
	case tabInstance:
		return instanceView(th, in, &d.inst, w, d.c.now())
	}
	r := in.Resource(nodeID)
	if r == nil {
		lines := []string{th.Bold.Render(in.Kind + " " + name(in)), ""}
		lines = append(lines, th.Label.Render("State       ")+th.State(in.State, stateWord(in.State), 0))
		if in.Message != "" {
			for _, l := range wrap(in.Message, max(w-12, 8)) {
				lines = append(lines, "            "+l)
			}
		}
		return append(lines, errorMemory(th, in.LastError, w, d.c.now())...)
	}
	if d.tab == tabYAML {
		return yamlView(th, r, d.ymode, d.revealed[revealKey{in.Key, r.ID}])
	}
	return inspect(th, r, w, d.c.now())
}

// tabBar renders "Inspect │ YAML │ ..." with the current tab highlighted.
func (d *detailPane) tabBar() string {
	th := d.c.th
	parts := make([]string, 0, numTabs)
	for t := detailTab(0); t < numTabs; t++ {
		parts = append(parts, th.Choice(d.tabLabel(t), t == d.tab, th.Selected, th.Dim))
	}
	return fit(strings.Join(parts, th.Dim.Render(" "+th.G.Sep+" ")), d.w, th.G.Ellipsis)
}
