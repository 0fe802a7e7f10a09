package tui

import (
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/theme"
)

// common is what every pane reads and none owns (soft-serve's
// common.Common): the backend, options, theme, keys and the shared
// spinner frame. Only the root model writes it.
type common struct {
	b     Backend
	views state.Views // the intake (intake.go): what b gives, made inert
	opts  Options
	th    *theme.Theme
	keys  *keymap
	frame int
}

func (c *common) now() time.Time { return c.opts.Now() }

// screen is one entry of the root's screen stack. Each holds its own state;
// View is pure (a test parses the package and fails on any View that
// assigns to a field): everything it draws was computed by prepare, which
// the root calls at the end of every Update.
type screen interface {
	// Update gets snapshots (snapMsg), mouse messages relative to the
	// screen's top line, and the keys no action took.
	Update(msg tea.Msg) tea.Cmd
	View() string
	SetSize(w, h int)
	// pane is the action table that drives the screen's keys, footer and help.
	pane() pane
	prepare()
	// overlay screens are drawn centred over the screen below.
	overlay() bool
	// views names what the screen draws now (see Views).
	views() []string
}

// snapMsg hands a screen the latest snapshot.
type snapMsg struct{ snap *state.Snapshot }

// Messages. changedMsg: the backend signalled a change; flushMsg: the
// coalescing window ended; tickMsg: the shared spinner/clock ticked.
type (
	changedMsg struct{}
	flushMsg   struct{}
	tickMsg    struct{}
	resultMsg  struct {
		text string
		err  error
	}
)

// feed is the plumbing between the backend's change signal and redraws.
type feed struct {
	sub       <-chan struct{}
	unsub     func()
	flushWait bool      // a flush tick is scheduled
	lastFlush time.Time // when the snapshot was last taken
	ticking   bool      // the spinner/clock tick is armed
	spinning  bool      // something visible is in progress
}

// Model is the root model: the screen stack, the latest snapshot and the
// flash line. Panes own everything else.
type Model struct {
	c     *common
	stack []screen
	snap  *state.Snapshot
	flash flash
	feed  feed
	cmd   commandLine // the `:` prompt

	w, h     int
	bodyTop  int // the first line under the status lines (for mouse clicks)
	quitting bool
	debug    bool // the debug overlay: memory and queue figures under the status line
}

func (m *Model) init() {
	m.w, m.h = 80, 24
	m.cmd = newCommandLine()
	m.stack = []screen{newInstancesScreen(m.c)}
	m.refresh()
}

func (m *Model) keys() *keymap { return m.c.keys }

// list is the instances screen, always at the bottom of the stack.
func (m *Model) list() *instancesScreen { return m.stack[0].(*instancesScreen) }

func (m *Model) top() screen { return m.stack[len(m.stack)-1] }

// base is the topmost screen that is not an overlay.
func (m *Model) base() screen {
	for i := len(m.stack) - 1; i > 0; i-- {
		if !m.stack[i].overlay() {
			return m.stack[i]
		}
	}
	return m.stack[0]
}

// detail is the open instance screen, or nil.
func (m *Model) detail() *instanceScreen {
	if s, ok := m.base().(*instanceScreen); ok {
		return s
	}
	return nil
}

func (m *Model) push(s screen) {
	m.stack = append(m.stack, s)
	s.Update(snapMsg{m.snap})
	m.leftScreen(s)
}

// pop leaves the top screen; the instances list stays.
func (m *Model) pop() {
	if len(m.stack) > 1 {
		s := m.stack[len(m.stack)-1]
		m.stack = m.stack[:len(m.stack)-1]
		m.leftScreen(s)
	}
}

// leftScreen clears the flash when the screen below it changes: a flash
// speaks of the screen it was given on ("sorted by name" is not about the
// instance opened next). An overlay (help, dialog) keeps it.
func (m *Model) leftScreen(s screen) {
	if !s.overlay() {
		m.flash.text = ""
	}
}

// Init subscribes to the backend and starts the clock.
func (m *Model) Init() tea.Cmd {
	m.feed.sub, m.feed.unsub = m.c.b.Subscribe()
	// Changes made between NewModel and now signalled nobody: catch up.
	m.refresh()
	m.sync()
	cmds := []tea.Cmd{m.wait(), m.tick()}
	if m.c.opts.Theme == "" || m.c.opts.Theme == theme.Auto {
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	return tea.Batch(cmds...)
}

func (m *Model) wait() tea.Cmd {
	ch := m.feed.sub
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		<-ch
		return changedMsg{}
	}
}

// tick arms the one shared timer: fast while a spinner shows, else once a
// second so "ago" columns stay true.
func (m *Model) tick() tea.Cmd {
	if m.feed.ticking {
		return nil
	}
	m.feed.ticking = true
	d := time.Second
	if m.feed.spinning {
		d = 100 * time.Millisecond
	}
	return tea.Tick(d, func(time.Time) tea.Msg { return tickMsg{} })
}

// refresh takes a new snapshot and hands it to every screen.
func (m *Model) refresh() {
	m.snap = m.c.snapshot()
	if m.snap == nil {
		m.snap = &state.Snapshot{}
	}
	m.feed.lastFlush = time.Now()
	for _, s := range m.stack {
		s.Update(snapMsg{m.snap})
	}
	m.feed.spinning = false
	for _, in := range m.snap.Instances {
		if in.Phase().Class() == state.ClassProgressing {
			m.feed.spinning = true
			break
		}
	}
	if d := m.detail(); d != nil && !m.feed.spinning {
		if in := m.snap.Instance(d.key); in != nil {
			for i := range in.Resources {
				if in.Resources[i].Phase().Class() == state.ClassProgressing {
					m.feed.spinning = true
					break
				}
			}
		}
	}
}

// flashTTL is how long a result stays in the flash line.
const flashTTL = 8 * time.Second

func (m *Model) setFlash(s string, isErr bool) { m.flash.set(s, isErr, m.c.now(), flashTTL) }

// FrameRequest asks a running model for the frame it would draw now; the
// reply is sent from the program's own goroutine, so an end-to-end test can
// read the screen without racing the model (send it with Program.Send).
type FrameRequest struct{ Reply chan<- string }

// Update handles one message, then lets every pane compute what it shows.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	if f := m.fetchInstance(); f != nil {
		cmd = tea.Batch(cmd, f)
	}
	if f := m.fetchGraphEvents(); f != nil {
		cmd = tea.Batch(cmd, f)
	}
	m.sync()
	return m, cmd
}

// fetchInstance asks the backend for the open instance's object and
// Events while its Instance tab shows and what it shows is stale.
func (m *Model) fetchInstance() tea.Cmd {
	d := m.detail()
	if d == nil || d.detail.tab != tabInstance {
		return nil
	}
	return d.detail.inst.fetch(m.c.b, d.instance(), m.c.now())
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case changedMsg, flushMsg, tickMsg:
		return m.updateFeed(msg)
	case editOpenMsg, editDoneMsg, editAppliedMsg:
		cmd, _ := m.updateEdit(msg)
		return cmd
	case planDoneMsg:
		m.planDone(msg)
		return nil
	case planAppliedMsg:
		m.planApplied(msg)
		return nil
	case instanceDetailMsg:
		if d := m.detail(); d != nil {
			d.detail.inst.take(msg)
		}
		return nil
	case FrameRequest:
		msg.Reply <- m.frame()
		return nil
	case ShownRequest:
		msg.Reply <- m.shown()
		return nil
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
		return nil
	case tea.BackgroundColorMsg:
		if m.c.opts.Theme == "" || m.c.opts.Theme == theme.Auto {
			if th, err := theme.New(theme.Options{Name: theme.Auto, IsDark: msg.IsDark(), NoColor: m.c.opts.NoColor, ASCII: m.c.opts.ASCII}); err == nil {
				m.c.th = th // panes key their caches by the theme
			}
		}
		return nil
	case resultMsg:
		if msg.err != nil {
			m.setFlash(msg.err.Error(), true)
		} else {
			m.setFlash(msg.text, false)
		}
		return nil
	case tea.MouseClickMsg, tea.MouseWheelMsg:
		if m.starting() || m.top().overlay() {
			return nil
		}
		return m.top().Update(relativeMouse(msg, m.bodyTop))
	case tea.KeyPressMsg:
		return m.updateKey(msg)
	}
	return m.top().Update(msg)
}

// updateFeed draws the store's changes: at once for the first of a burst,
// then once per frame interval, and at every tick whatever happened to a
// notification.
func (m *Model) updateFeed(msg tea.Msg) tea.Cmd {
	switch msg.(type) {
	case changedMsg:
		if m.feed.flushWait {
			return m.wait()
		}
		if since := time.Since(m.feed.lastFlush); since < m.c.opts.FrameInterval {
			// Leading edge already drawn: draw the rest of the burst once
			// the window ends.
			m.feed.flushWait = true
			return tea.Batch(m.wait(), tea.Tick(m.c.opts.FrameInterval-since, func(time.Time) tea.Msg { return flushMsg{} }))
		}
		m.refresh()
		return tea.Batch(m.wait(), m.tick())
	case flushMsg:
		m.feed.flushWait = false
		m.refresh()
		return m.tick()
	}
	m.feed.ticking = false // a tickMsg
	if m.feed.spinning {
		m.c.frame++
	}
	m.flash.expire(m.c.now())
	// Belt and braces: never show a stale state for longer than a tick,
	// whatever happened to a notification.
	if !m.feed.flushWait && m.c.b.Snapshot().Version != m.snap.Version {
		m.refresh()
	}
	return m.tick()
}

// updateKey gives a key to the panes' bindings, then to the command line,
// the help (any key closes it) or the screen on top; a key nothing binds
// says where it works.
func (m *Model) updateKey(msg tea.KeyPressMsg) tea.Cmd {
	handled, cmd := m.dispatch(msg, m.activePanes()...)
	if handled || m.starting() {
		return cmd
	}
	if m.cmd.active {
		var c tea.Cmd
		m.cmd.input, c = m.cmd.input.Update(msg)
		m.cmd.hint = ""
		return c
	}
	if _, ok := m.top().(*helpScreen); ok {
		m.pop() // any key closes the help
		return nil
	}
	if p := m.top().pane(); p == paneInstances || p == paneInstance || p == paneGraphs || p == paneGraph {
		m.setFlash(m.whyNot(msg.String(), p), false) // never silently nothing
		return nil
	}
	return m.top().Update(msg)
}

// starting is true while only the startup or fatal screen shows.
func (m *Model) starting() bool { return m.snap.Fatal != nil || !m.snap.Startup.Done }

// activePanes are the action tables that get the keys now.
func (m *Model) activePanes() []pane {
	if m.starting() {
		return []pane{paneStartup}
	}
	if m.cmd.active {
		return []pane{paneCommand}
	}
	p := m.top().pane()
	if p == paneInstances || p == paneInstance || p == paneGraphs || p == paneGraph {
		return []pane{p, paneGlobal}
	}
	return []pane{p}
}

func relativeMouse(msg tea.Msg, top int) tea.Msg {
	switch msg := msg.(type) {
	case tea.MouseClickMsg:
		msg.Y -= top
		return msg
	case tea.MouseWheelMsg:
		msg.Y -= top
		return msg
	}
	return msg
}

// headerScope is the view the header names: the list's (:ns, :kind,
// :graph) under the list and an instance; none on the graphs screens,
// which show every graph whatever the list's view.
func (m *Model) headerScope() viewScope {
	switch m.base().pane() {
	case paneGraphs, paneGraphsFilter, paneGraph:
		return viewScope{}
	}
	return m.list().scope()
}

// chrome is the status lines above the screens and the flash and footer
// lines below them.
func (m *Model) chrome() (above []string, below int) {
	above = []string{statusLine(m.c, m.snap, m.w, m.headerScope())}
	if a := watchAlarm(m.c, m.snap, m.w); a != "" {
		above = append(above, a)
	}
	if k := kroLine(m.c, m.snap, m.w); k != "" {
		above = append(above, k)
	}
	if a := accessLine(m.c, m.snap, m.w); a != "" {
		above = append(above, a)
	}
	if m.debug {
		above = append(above, debugLine(m.c, m.snap, m.w))
	}
	return above, len(m.flashLines(m.base())) + 1
}

// sync sizes the screens and lets each compute what it shows.
func (m *Model) sync() {
	above, below := m.chrome()
	m.bodyTop = len(above)
	bodyH := max(m.h-len(above)-below, 1)
	for _, s := range m.stack {
		if s.overlay() {
			s.SetSize(m.w, m.h)
		} else {
			s.SetSize(m.w, bodyH)
		}
		s.prepare()
	}
	m.prepareCommand()
}

func (m *Model) quit() tea.Cmd {
	m.quitting = true
	if m.feed.unsub != nil {
		m.feed.unsub()
		m.feed.unsub = nil
	}
	return tea.Quit
}

// View draws the frame from what the panes computed in Update.
func (m *Model) View() tea.View {
	if m.quitting {
		return tea.NewView("")
	}
	v := tea.NewView(m.frame())
	v.AltScreen = true
	v.WindowTitle = "kroscope"
	if !m.c.opts.NoMouse {
		v.MouseMode = tea.MouseModeCellMotion
	}
	return v
}

// Frame renders the current frame as a string (tests and benchmarks).
func (m *Model) Frame() string { return m.frame() }

func (m *Model) frame() string {
	w, h := m.w, m.h
	if w < 20 || h < 5 {
		return clip("kroscope: terminal too small", w, "")
	}
	if f := m.snap.Fatal; f != nil {
		return fatalScreen(m.c, f, w, h)
	}
	if !m.snap.Startup.Done {
		return startupScreen(m.c, m.snap, w, h)
	}
	above, _ := m.chrome()
	lines := append([]string(nil), above...)
	base := m.base()
	lines = append(lines, base.View())
	lines = append(lines, m.flashLines(base)...)
	lines = append(lines, m.footer())
	frame := strings.Join(lines, "\n")
	bi := 0
	for i := len(m.stack) - 1; i > 0; i-- {
		if !m.stack[i].overlay() {
			bi = i
			break
		}
	}
	for _, s := range m.stack[bi+1:] {
		frame = overlay(frame, s.View(), w, h)
	}
	return frame
}

// prompter is a screen with a line of its own for the flash row: the
// filter prompt while typing (it wins over the flash), or the filter in
// force (the flash wins).
type prompter interface {
	prompt() (line string, typing bool)
}

// flashLines are the rows above the footer: the command line, a prompt,
// or the flash (one row, or a few when it is long).
func (m *Model) flashLines(base screen) []string {
	if m.cmd.active {
		return []string{m.cmd.line}
	}
	if p, ok := base.(prompter); ok {
		line, typing := p.prompt()
		if typing || (line != "" && !m.flash.visible()) {
			return []string{line}
		}
	}
	return m.flash.lines(m.c.th, m.w)
}

// footer lists the footer entries of the active tables: whole entries
// only, as many as fit, and the global ones (help, quit) always.
func (m *Model) footer() string {
	th := m.c.th
	panes := m.activePanes()
	render := func(x hint) string {
		if x.denied != "" { // greyed: this user may not
			return th.Dim.Render(x.key + " " + x.desc)
		}
		return th.Key.Render(x.key) + " " + th.KeyDesc.Render(x.desc)
	}
	var tail []string
	tailW := 0
	if len(panes) > 1 {
		for _, x := range m.footerHints(panes[1:]...) {
			tail = append(tail, render(x))
			tailW += ansi.StringWidth(x.key+" "+x.desc) + 2
		}
	}
	var parts []string
	used := tailW
	for _, x := range m.footerHints(panes[0]) {
		w := ansi.StringWidth(x.key+" "+x.desc) + 2
		if used+w > m.w+2 {
			break
		}
		parts = append(parts, render(x))
		used += w
	}
	return clip(strings.Join(append(parts, tail...), "  "), m.w, th.G.Ellipsis)
}

// overlay centres box over the frame (lipgloss compositor layers).
func overlay(frame, box string, w, h int) string {
	bw, bh := lipgloss.Width(box), lipgloss.Height(box)
	x, y := max((w-bw)/2, 0), max((h-bh)/2, 0)
	c := lipgloss.NewCompositor(
		lipgloss.NewLayer(frame),
		lipgloss.NewLayer(box).X(x).Y(y).Z(1),
	)
	return c.Render()
}

// globalActions work on the list and instance screens.
func globalActions() []action {
	return []action{
		{name: "help", keys: []string{"?"}, help: "this help", short: "help",
			do: func(m *Model) tea.Cmd { m.push(newHelpScreen(m)); return nil }},
		{name: "quit", keys: []string{"q"}, help: "quit", short: "quit", do: (*Model).quit},
		{name: "forceQuit", keys: []string{"ctrl+c"}, help: "quit from anywhere", do: (*Model).quit},
		// The debug overlay: memory and queue figures under the status line.
		{name: "debug", keys: []string{"ctrl+g"}, help: "debug line: memory, queue, reconciles in flight (again: hide)",
			do: func(m *Model) tea.Cmd { m.debug = !m.debug; return nil }},
		{name: "command", keys: []string{":"}, help: "command: :kind NAME, :ns NAME, :graph NAME, :graphs, :plan FILE, :q (tab completes, up/down: history)", do: (*Model).openCommand},
		graphsAction(),
	}
}

// startupActions: nothing to act on yet, only quitting makes sense.
func startupActions() []action {
	return []action{
		{name: "quit", keys: []string{"q"}, help: "quit", short: "quit", do: (*Model).quit},
		{name: "forceQuit", keys: []string{"ctrl+c"}, help: "quit from anywhere", do: (*Model).quit},
	}
}

func init() {
	actionTables = map[pane][]action{
		paneGlobal:    globalActions(),
		paneInstances: instancesActions(),
		paneFilter:    filterActions(),
		paneInstance:  instanceActions(),
		paneDialog:    dialogActions(),
		paneHelp:      helpActions(),
		paneStartup:   startupActions(),
		paneCommand:   commandActions(),
		// The graphs screens (graphsactions.go).
		paneGraphs:       graphsActions(),
		paneGraphsFilter: graphsFilterActions(),
		paneGraph:        rgdActions(),
		panePlan:         planActions(),
	}
}
