package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/aymanbagabas/go-udiff"
	"sigs.k8s.io/yaml"

	"github.com/kroscope/kroscope/engine/state"
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
		switch state.Phase(r.State).Class() {
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
	row("Waiting for", r.WaitingFor)
	for _, e := range r.ReadyWhen {
		row("readyWhen", e)
	}
	for _, e := range r.IncludeWhen {
		row("includeWhen", e)
	}
	if !r.FirstApplied.IsZero() {
		applied := r.FirstApplied.Format("15:04:05") + " (" + ago(now, r.FirstApplied) + " ago)"
		row("Applied", applied)
	}
	if !r.Ready.IsZero() {
		row("Ready", r.Ready.Format("15:04:05")+" (after "+dur(r.Ready.Sub(r.FirstApplied))+")")
	}
	if r.Err != "" {
		out = append(out, "", th.ClassStyle(state.ClassFailed).Render("Error"))
		for _, l := range wrap(r.Err, max(w-2, 8)) {
			out = append(out, "  "+l)
		}
	}
	return out
}

func stateWord(s string) string {
	if s == "" {
		return "NEW"
	}
	return s
}

func isSecret(r *state.Resource) bool {
	return r.Kind == "Secret" && (r.APIVersion == "v1" || r.APIVersion == "")
}

// masked returns obj with the values of a Secret's data and stringData
// replaced, so they never reach the screen unless revealed.
func masked(obj map[string]any, mask string) map[string]any {
	if obj == nil {
		return nil
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	for _, f := range []string{"data", "stringData"} {
		d, ok := obj[f].(map[string]any)
		if !ok {
			continue
		}
		md := make(map[string]any, len(d))
		for k := range d {
			md[k] = mask
		}
		out[f] = md
	}
	return out
}

// withoutNoise drops fields nobody reads when comparing objects.
func withoutNoise(obj map[string]any) map[string]any {
	md, ok := obj["metadata"].(map[string]any)
	if !ok {
		return obj
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	m2 := make(map[string]any, len(md))
	for k, v := range md {
		if k != "managedFields" {
			m2[k] = v
		}
	}
	out["metadata"] = m2
	return out
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
	desired, observed := r.Desired, withoutNoise(r.Observed)
	if isSecret(r) && !reveal {
		desired, observed = masked(desired, mask), masked(observed, mask)
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
		a, b := toYAML(desired), toYAML(observed)
		d := udiff.Unified("desired", "observed", a, b)
		if d == "" {
			return []string{th.Dim.Render("(no difference)")}
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
		line := h.At.Format("15:04:05") + "  " + fit(from, 12, th.G.Ellipsis) + " " +
			th.Style(h.To).Render(fit(h.To, 12, th.G.Ellipsis)) + " " + fit(dur(h.Duration), 7, "") + " " + strings.ReplaceAll(h.Message, "\n", " ")
		out = append(out, clip(line, w, th.G.Ellipsis))
	}
	return out
}

// timeline draws, per resource, a bar from its first apply to ready on a
// shared time axis, so the slow resource of a rollout stands out.
func timeline(th *theme.Theme, in *state.Instance, w int, now time.Time) []string {
	var t0, t1 time.Time
	open := false
	for _, r := range in.Resources {
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
	if t0.IsZero() {
		return []string{th.Dim.Render("(nothing applied yet)")}
	}
	span := t1.Sub(t0)
	if span <= 0 {
		span = time.Millisecond
	}
	idW := 4
	for _, r := range in.Resources {
		idW = max(idW, len(r.ID))
	}
	idW = min(idW, max(w/4, 8))
	durW := 7
	barW := max(w-idW-durW-4, 10)
	// The slowest resource is the one that took longest to become ready.
	slow, slowD := "", time.Duration(0)
	for _, r := range in.Resources {
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
	col := func(t time.Time) int {
		return clamp(int(float64(t.Sub(t0))/float64(span)*float64(barW)), 0, barW)
	}
	out := []string{th.Header.Render(fit(fmt.Sprintf("ROLLOUT from %s, %s", t0.Format("15:04:05"), dur(span)), w, ""))}
	for _, r := range in.Resources {
		label := fit(r.ID, idW, th.G.Ellipsis)
		if r.FirstApplied.IsZero() {
			out = append(out, label+"  "+th.Dim.Render(fit("("+strings.ToLower(stateWord(r.State))+", not applied)", barW+durW+2, th.G.Ellipsis)))
			continue
		}
		a := col(r.FirstApplied)
		end, done := r.Ready, !r.Ready.IsZero()
		if !done {
			end = now
		}
		b := max(col(end), a+1)
		b = min(b, barW)
		a = min(a, b-1)
		bar := strings.Repeat(th.G.BarEmpty, a)
		fill := strings.Repeat(th.G.BarFull, b-a)
		rest := strings.Repeat(th.G.BarEmpty, barW-b)
		st := th.Bar
		if !done {
			st = th.Style(r.State)
		}
		if r.ID == slow && len(in.Resources) > 1 {
			st = th.Warn
		}
		d := dur(end.Sub(r.FirstApplied))
		if !done {
			d += th.G.Ellipsis
			if th.ASCII {
				d = dur(end.Sub(r.FirstApplied)) + "+"
			}
		}
		line := label + "  " + th.Dim.Render(bar) + st.Render(fill) + th.Dim.Render(rest) + "  " + fit(d, durW, "")
		out = append(out, line)
	}
	axis := strings.Repeat(" ", idW+2) + fit("0s", barW/2, "") + fmt.Sprintf("%*s", barW-barW/2, dur(span))
	out = append(out, th.Dim.Render(axis))
	if slow != "" && len(in.Resources) > 1 {
		note := "slowest: " + slow + " (" + dur(slowD) + ")"
		if open {
			note += ", still rolling out"
		}
		out = append(out, th.Warn.Render(note))
	}
	return out
}

// logsView renders the last log lines that fit, oldest first. With match
// set, only lines that mention it (an instance's name) are kept.
func logsView(th *theme.Theme, logs []state.LogLine, match string, w, h int) []string {
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
		out = append(out, l.At.Format("15:04:05")+" "+st.Render(fit(lvl, 5, ""))+" "+clip(strings.ReplaceAll(text, "\n", " "), max(w-15, 1), th.G.Ellipsis))
	}
	return out
}

// detailContent builds the right pane's text for the current tab; the
// viewport scrolls it.
func (m *Model) detailContent(in *state.Instance, w int) []string {
	th := m.th
	switch m.tab {
	case tabHistory:
		return history(th, in, w)
	case tabTimeline:
		return timeline(th, in, w, m.now())
	case tabLogs:
		return logsView(th, m.snap.Logs, in.Key.Name, w, 500)
	}
	r := in.Resource(m.nodeID)
	if r == nil {
		lines := []string{th.Bold.Render(in.Kind + " " + name(in)), ""}
		lines = append(lines, th.Label.Render("State       ")+th.State(in.State, stateWord(in.State), 0))
		if in.Message != "" {
			for _, l := range wrap(in.Message, max(w-12, 8)) {
				lines = append(lines, "            "+l)
			}
		}
		return lines
	}
	if m.tab == tabYAML {
		return yamlView(th, r, m.ymode, m.revealed[m.cur.String()+"#"+r.ID])
	}
	return inspect(th, r, w, m.now())
}

// tabBar renders "Inspect │ YAML │ ..." with the current tab highlighted.
func (m *Model) tabBar(w int) string {
	th := m.th
	parts := make([]string, 0, numTabs)
	for t := detailTab(0); t < numTabs; t++ {
		label := t.String()
		if t == tabYAML {
			label += " (" + m.ymode.String() + ")"
		}
		if t == m.tab {
			st := th.Title
			if m.focus == paneDetail {
				st = th.Selected
			}
			parts = append(parts, st.Render(label))
		} else {
			parts = append(parts, th.Dim.Render(label))
		}
	}
	return fit(strings.Join(parts, th.Dim.Render(" "+th.G.Sep+" ")), w, th.G.Ellipsis)
}
