package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/theme"
)

// View renders the frame. When the last Update changed nothing visible
// (a change signal inside the coalescing window), it returns the last frame.
func (m *Model) View() tea.View {
	if m.quitting {
		return tea.NewView("")
	}
	if !m.skipDraw || m.lastFrame == "" {
		m.lastFrame = m.render()
	}
	v := tea.NewView(m.lastFrame)
	v.AltScreen = true
	v.WindowTitle = "kroscope"
	if !m.opts.NoMouse {
		v.MouseMode = tea.MouseModeCellMotion
	}
	return v
}

// Frame renders the current frame as a string (tests and benchmarks).
func (m *Model) Frame() string { return m.render() }

func (m *Model) render() string {
	w, h := m.w, m.h
	if w < 20 || h < 5 {
		return clip("kroscope: terminal too small", w, "")
	}
	if f := m.snap.Fatal; f != nil {
		return m.fatalScreen(f)
	}
	if !m.snap.Startup.Done {
		return m.startupScreen()
	}
	var lines []string
	lines = append(lines, m.statusLine())
	if a := m.watchAlarm(); a != "" {
		lines = append(lines, a)
	}
	var head string
	switch m.scr {
	case scrInstances:
		head = m.counts()
		if m.sortBy != sortName {
			head += m.th.Dim.Render("  sorted by " + m.sortBy.String())
		}
	case scrInstance:
		head = m.crumb()
	}
	lines = append(lines, clip(head, w, m.th.G.Ellipsis))
	footer := []string{m.flashLine(), m.helpLine()}
	bodyH := h - len(lines) - len(footer)
	m.bodyTop = len(lines) + 1 // below the body's own header line
	var body []string
	switch m.scr {
	case scrInstances:
		tableH, logH := bodyH, 0
		if m.showLogs {
			logH = max(bodyH/3, 3)
			tableH = bodyH - logH
		}
		body = padLines(m.instancesBody(tableH), w, tableH)
		if logH > 0 {
			body = append(body, m.th.Header.Render(fit("LOGS", w, "")))
			body = append(body, block(logsView(m.th, m.snap.Logs, "", w, logH-1), w, logH-1, m.th.G.Ellipsis)...)
		}
	case scrInstance:
		body = m.instanceBody(w, bodyH)
	}
	lines = append(lines, body...)
	lines = append(lines, footer...)
	frame := strings.Join(lines, "\n")
	switch {
	case m.dlg != nil:
		frame = m.overlay(frame, m.dialogBox())
	case m.showHelp:
		frame = m.overlay(frame, m.helpBox())
	}
	return frame
}

// crumb is the instance screen's header: kind, name, state, progress.
func (m *Model) crumb() string {
	in := m.snap.Instance(m.cur)
	th := m.th
	if in == nil {
		return th.Warn.Render(keyName(m.cur) + " is gone (esc goes back)")
	}
	ready, total := in.ReadyCount()
	s := th.Bold.Render(in.Kind+" "+name(in)) + "  " + th.State(in.State, stateWord(in.State), m.frame) +
		fmt.Sprintf("  %d/%d ready", ready, total) + th.Dim.Render(fmt.Sprintf("  graph %s  gen %d/%d  reconciles %d", in.Graph, in.ObservedGeneration, in.Generation, in.Reconciles))
	if in.Message != "" {
		s += "  " + th.Style(in.State).Render(strings.ReplaceAll(in.Message, "\n", " "))
	}
	return s
}

// instanceBody lays out the graph and the detail pane: side by side when
// wide enough, else only the focused pane.
func (m *Model) instanceBody(w, h int) []string {
	in := m.snap.Instance(m.cur)
	if in == nil {
		return block(nil, w, h, "")
	}
	m.syncNode()
	side := w >= 100
	gw, dw := w, w
	if side {
		gw = max(w*2/5, 36)
		dw = w - gw - 1
	}
	m.graphW = 0
	var gl, dl []string
	if side || m.focus == paneGraph {
		gk := graphKey{key: in.Key, version: in.Version, node: m.node, off: m.nodeOffset, focus: m.focus, frame: m.frame, w: gw, h: h}
		if gk != m.graphKey || m.graphLines == nil {
			m.graphLines = block(m.graphPane(in, gw, h), gw, h, m.th.G.Ellipsis)
			m.graphKey = gk
		}
		gl = m.graphLines
	}
	if side || m.focus == paneDetail {
		dl = m.detailPane(in, dw, h)
	}
	if !side {
		if m.focus == paneGraph {
			return gl
		}
		return dl
	}
	m.graphW = gw
	sep := m.th.Dim.Render(m.th.G.Sep)
	out := make([]string, h)
	for i := range out {
		out[i] = gl[i] + sep + dl[i]
	}
	return out
}

// detailPane renders the tab bar and the scrolled content. The viewport's
// content is set only when what it shows changed.
func (m *Model) detailPane(in *state.Instance, w, h int) []string {
	key := fmt.Sprintf("%s|%d|%s|%d|%d|%d|%v|%d|%p", in.Key, in.Version, m.nodeID, m.tab, m.ymode, w, m.revealed[m.cur.String()+"#"+m.nodeID], len(m.snap.Logs), m.th)
	if m.tab == tabTimeline {
		key += m.now().String()
	}
	m.vp.SetWidth(w)
	m.vp.SetHeight(max(h-1, 1))
	if key != m.vpKey {
		keepScroll := strings.HasPrefix(m.vpKey, fmt.Sprintf("%s|", in.Key)) && m.vpKey != "" && sameView(m.vpKey, key)
		off := m.vp.YOffset()
		m.vp.SetContentLines(m.detailContent(in, w))
		if keepScroll {
			m.vp.SetYOffset(off)
		} else {
			m.vp.GotoTop()
		}
		m.vpKey = key
	}
	// The viewport re-measures every line when drawn: reuse the last
	// drawing while neither content, scroll nor focus changed.
	dk := detailKey{content: m.vpKey, off: m.vp.YOffset(), w: w, h: h, tab: m.tab, focus: m.focus}
	if dk == m.detailKey && m.detailLines != nil {
		return m.detailLines
	}
	out := []string{m.tabBar(w)}
	out = append(out, strings.Split(m.vp.View(), "\n")...)
	m.detailKey, m.detailLines = dk, block(out, w, h, m.th.G.Ellipsis)
	return m.detailLines
}

type graphKey struct {
	key                    state.InstanceKey
	version                uint64
	node, off, frame, w, h int
	focus                  pane
}

type detailKey struct {
	content string
	off     int
	w, h    int
	tab     detailTab
	focus   pane
}

// sameView reports whether two viewport keys show the same resource and tab
// (only the data changed), so the scroll position is kept.
func sameView(a, b string) bool {
	pa, pb := strings.Split(a, "|"), strings.Split(b, "|")
	return len(pa) > 4 && len(pb) > 4 && pa[0] == pb[0] && pa[2] == pb[2] && pa[3] == pb[3] && pa[4] == pb[4]
}

func (m *Model) flashLine() string {
	if m.filtering {
		return fit(m.filter.View(), m.w, "")
	}
	th := m.th
	if m.flash == "" {
		if m.query != "" {
			return fit(th.Dim.Render("filter: "+m.query), m.w, th.G.Ellipsis)
		}
		return strings.Repeat(" ", m.w)
	}
	st := th.FlashOK
	if m.flashErr {
		st = th.FlashErr
	}
	return st.Render(fit(m.flash, m.w, th.G.Ellipsis))
}

func (m *Model) helpLine() string {
	k := m.keys
	var b []hint
	switch {
	case m.scr == scrInstance:
		b = []hint{{k.Back.Help().Key, "back"}, {k.Tab.Help().Key, "pane"}, {k.YAML.Help().Key, "yaml"}, {k.Timeline.Help().Key, "timeline"},
			{k.NextError.Help().Key, "error"}, {k.Requeue.Help().Key, "requeue"}, {k.Delete.Help().Key, "delete"}, {k.Help.Help().Key, "help"}, {k.History.Help().Key, "history"}, {k.NextTab.Help().Key, "next view"}}
	default:
		b = []hint{{k.Open.Help().Key, "open"}, {k.Filter.Help().Key, "filter"}, {k.Requeue.Help().Key, "requeue"},
			{k.Delete.Help().Key, "delete"}, {k.NextError.Help().Key, "error"}, {k.Help.Help().Key, "help"}, {k.Quit.Help().Key, "quit"}, {k.Sort.Help().Key, "sort"}, {k.Logs.Help().Key, "logs"}}
	}
	parts := make([]string, len(b))
	for i, x := range b {
		parts[i] = m.th.Key.Render(x.k) + " " + m.th.KeyDesc.Render(x.d)
	}
	return clip(strings.Join(parts, "  "), m.w, m.th.G.Ellipsis)
}

type hint struct{ k, d string }

// helpBox lists every binding of the keymap in as many columns as fit.
func (m *Model) helpBox() string {
	th := m.th
	var all []keyHelp
	kw, dw := 0, 0
	for _, group := range m.keys.FullHelp() {
		for _, b := range group {
			if !b.Enabled() {
				continue
			}
			h := b.Help()
			all = append(all, keyHelp{h.Key, h.Desc})
			kw, dw = max(kw, ansi.StringWidth(h.Key)), max(dw, ansi.StringWidth(h.Desc))
		}
	}
	colW := kw + 1 + dw + 3
	cols := clamp((m.w-8)/colW, 1, 4)
	rows := (len(all) + cols - 1) / cols
	var b strings.Builder
	b.WriteString(th.Title.Render("Keys") + "\n\n")
	for r := range rows {
		var line strings.Builder
		for c := range cols {
			i := c*rows + r
			if i >= len(all) {
				break
			}
			line.WriteString(th.Key.Render(fit(all[i].k, kw, th.G.Ellipsis)) + " " + th.KeyDesc.Render(fit(all[i].d, dw, th.G.Ellipsis)))
			if c < cols-1 {
				line.WriteString("   ")
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	b.WriteString("\n" + th.Dim.Render("filter: text  state:error  kind:WebApp  ns:team-a") +
		"\n" + th.Dim.Render("remap keys in $XDG_CONFIG_HOME/kroscope/config.yaml") + "\n" + th.Dim.Render("any key closes"))
	return th.Dialog.Render(b.String())
}

type keyHelp struct{ k, d string }

func (m *Model) dialogBox() string {
	d, th := m.dlg, m.th
	maxW := max(m.w-8, 20)
	var b strings.Builder
	b.WriteString(th.Title.Render(clip(d.title, maxW, th.G.Ellipsis)))
	b.WriteString("\n\n")
	limit := max(m.h-10, 3)
	for i, l := range d.lines {
		if i == limit && len(d.lines) > limit+1 {
			b.WriteString(fmt.Sprintf("%s and %d more\n", th.G.Ellipsis, len(d.lines)-limit))
			break
		}
		b.WriteString(clip(l, maxW, th.G.Ellipsis) + "\n")
	}
	cancel, yes := th.ButtonOff, th.ButtonOff
	if d.choice == 0 {
		cancel = th.ButtonOn
	} else {
		yes = th.ButtonOn
	}
	b.WriteString("\n" + cancel.Render("Cancel") + "  " + yes.Render(d.confirm))
	b.WriteString("\n" + th.Dim.Render(m.keys.Left.Help().Key+"/"+m.keys.Right.Help().Key+" choose, "+m.keys.Confirm.Help().Key+" confirms, "+m.keys.Back.Help().Key+" cancels"))
	return th.Dialog.Render(b.String())
}

// overlay centres box over the frame (lipgloss compositor layers).
func (m *Model) overlay(frame, box string) string {
	bw, bh := lipgloss.Width(box), lipgloss.Height(box)
	x, y := max((m.w-bw)/2, 0), max((m.h-bh)/2, 0)
	c := lipgloss.NewCompositor(
		lipgloss.NewLayer(frame),
		lipgloss.NewLayer(box).X(x).Y(y).Z(1),
	)
	return c.Render()
}

func (m *Model) fatalScreen(f *state.Fatal) string {
	th := m.th
	w := min(m.w-4, 100)
	var b strings.Builder
	b.WriteString(th.ClassStyle(theme.ClassError).Render(th.G.Error+" "+f.Title) + "\n\n")
	for _, l := range wrap(f.Cause, w-4) {
		b.WriteString(l + "\n")
	}
	if f.Hint != "" {
		b.WriteString("\n" + th.Bold.Render("What to do") + "\n")
		for _, l := range wrap(f.Hint, w-4) {
			b.WriteString(l + "\n")
		}
	}
	b.WriteString("\n" + th.Dim.Render(m.keys.Quit.Help().Key+" quits"))
	box := th.Dialog.Width(w).Render(b.String())
	return lipgloss.Place(m.w, m.h, lipgloss.Center, lipgloss.Center, box)
}

func (m *Model) startupScreen() string {
	th, st := m.th, m.snap.Startup
	w := min(m.w-4, 70)
	phase := st.Phase
	if phase == "" {
		phase = "connecting"
	}
	var b strings.Builder
	b.WriteString(th.Title.Render("kroscope") + " " + th.Dim.Render("starting") + "\n\n")
	line := th.State("IN_PROGRESS", "", m.frame) + " " + phase
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
	for _, wt := range m.snap.Watches {
		if !wt.Synced {
			waiting = append(waiting, wt.Name)
		}
	}
	if len(waiting) > 0 {
		b.WriteString("\n" + th.Dim.Render("waiting for:") + "\n")
		limit := max(m.h-14, 1)
		for i, n := range waiting {
			if i == limit {
				b.WriteString(th.Dim.Render(fmt.Sprintf("  and %d more", len(waiting)-limit)) + "\n")
				break
			}
			b.WriteString("  " + th.Glyph("WAITING", 0) + " " + clip(n, w-6, th.G.Ellipsis) + "\n")
		}
	}
	where := m.snap.Cluster.Context
	if m.snap.Cluster.Server != "" {
		where += " " + m.snap.Cluster.Server
	}
	if strings.TrimSpace(where) != "" {
		b.WriteString("\n" + th.Dim.Render(clip(strings.TrimSpace(where), w-4, th.G.Ellipsis)))
	}
	box := th.Dialog.Width(w).Render(strings.TrimRight(b.String(), "\n"))
	return lipgloss.Place(m.w, m.h, lipgloss.Center, lipgloss.Center, box)
}
