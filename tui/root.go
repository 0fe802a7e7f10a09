package tui

import (
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/theme"
)

// common is what every pane reads and none owns (soft-serve's
// common.Common): the backend, options, theme, keys and the shared
// spinner frame, which only the root model writes, and the host, where
// panes post what they ask of the root.
type common struct {
	b     Backend
	views state.Views // the intake (intake.go): what b gives, made inert
	opts  Options
	th    *theme.Theme
	keys  *keymap
	frame int
	host  *host
	// dark and marks are what the terminal said of itself: its
	// background, and that it draws no attribute (retheme).
	dark, marks bool
}

func (c *common) now() time.Time { return c.opts.Now() }

// explain says why a key no action took does nothing on the screen here
// (acts: its actions), never silently nothing.
func (c *common) explain(msg tea.Msg, here string, acts []action) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		c.host.flash(c.keys.whyNot(k.String(), here, acts), false)
	}
}

// screen is one entry of the root's screen stack, and all the root knows
// of it. Each holds its own state and declares its own actions; View is
// pure (a test parses the package and fails on any View that assigns to
// a field): everything it draws was computed by prepare, which the root
// calls at the end of every Update.
type screen interface {
	// Update gets snapshots (snapMsg), mouse messages relative to the
	// screen's top line, the replies of its commands, and the keys no
	// action took (the screen says why they do nothing, or types them).
	Update(msg tea.Msg) tea.Cmd
	View() string
	SetSize(w, h int)
	prepare()
	// bindings are the screen's actions now, in footer order; global: the
	// root's (help, quit, command, debug, graphs) join them.
	bindings() (acts []action, global bool)
	// overlay screens are drawn centred over the screen below.
	overlay() bool
	// views names what the screen draws now (see Views); shown is the
	// node selected and the whole text of its scrolled pane, if any.
	views() []string
	shown() (node, text string)
	// scope is the view the header names; own false: the screen below's.
	scope() (v viewScope, own bool)
	// prompt is a line of its own for the flash row: a filter being typed
	// (it wins over the flash) or the filter in force (the flash wins).
	prompt() (line string, typing bool)
	// fetch is a read the screen needs now (nil: none), asked after
	// every Update.
	fetch() tea.Cmd
	// spinning: something the screen shows is in progress.
	spinning() bool
}

// screenDefaults are what a screen that has none of these answers.
type screenDefaults struct{}

func (screenDefaults) overlay() bool            { return false }
func (screenDefaults) shown() (string, string)  { return "", "" }
func (screenDefaults) scope() (viewScope, bool) { return viewScope{}, false }
func (screenDefaults) prompt() (string, bool)   { return "", false }
func (screenDefaults) fetch() tea.Cmd           { return nil }
func (screenDefaults) spinning() bool           { return false }

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
	// unsettled counts the snapshot's instances in progress or waiting
	// (the header's "waiting on N"), counted once per snapshot, not per
	// frame.
	unsettled int
}

// Model is the root model. It keeps only what is global: the screen
// stack, the feed and the latest snapshot, the flash line, the command
// line, and the actions every screen shares (help, quit, command, debug,
// graphs). It reaches a screen only through the screen interface.
type Model struct {
	c     *common
	stack stack
	snap  *state.Snapshot
	flash flash
	feed  feed
	cmd   commandLine // the `:` prompt
	acts  rootActions

	w, h     int
	bodyTop  int // the first line under the status lines (for mouse clicks)
	quitting bool
	debug    bool // the debug overlay: memory and queue figures under the status line
}

// rootActions are the root's own declarations.
type rootActions struct {
	global  []action
	force   []action // ctrl+c alone: over a modal screen, the command line, the startup screen
	startup []action
	command []action
}

// stack is the screens, the instance list always at the bottom.
type stack []screen

func (st stack) top() screen { return st[len(st)-1] }

// baseIndex is where the topmost screen that is not an overlay is.
func (st stack) baseIndex() int {
	for i := len(st) - 1; i > 0; i-- {
		if !st[i].overlay() {
			return i
		}
	}
	return 0
}

func (st stack) base() screen { return st[st.baseIndex()] }

func (m *Model) init() {
	m.w, m.h = 80, 24
	if m.c.host == nil {
		m.c.host = &host{}
	}
	m.cmd = newCommandLine(m.c)
	g := m.globalActions()
	m.acts = rootActions{global: g, startup: m.startupActions(), command: m.commandActions(),
		force: slices.DeleteFunc(slices.Clone(g), func(a action) bool { return a.name != "forceQuit" })}
	m.stack = stack{newInstancesScreen(m.c)}
	m.refresh()
}

// Init subscribes to the backend and starts the clock.
func (m *Model) Init() tea.Cmd {
	m.feed.sub, m.feed.unsub = m.c.b.Subscribe()
	// Changes made between NewModel and now signalled nobody: catch up.
	m.refresh()
	m.sync()
	cmds := []tea.Cmd{m.feed.wait(), m.feed.tick()}
	if m.c.opts.Theme == "" || m.c.opts.Theme == theme.Auto {
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	return tea.Batch(cmds...)
}

func (f *feed) wait() tea.Cmd {
	ch := f.sub
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
func (f *feed) tick() tea.Cmd {
	if f.ticking {
		return nil
	}
	f.ticking = true
	d := time.Second
	if f.spinning {
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
	m.feed.spinning, m.feed.unsettled = false, 0
	for _, in := range m.snap.Instances {
		switch in.Phase().Class() {
		case state.ClassProgressing:
			m.feed.spinning = true
			m.feed.unsettled++
		case state.ClassWaiting:
			m.feed.unsettled++
		}
	}
	m.feed.spinning = m.feed.spinning || m.stack.base().spinning()
}

// flashTTL is how long a result stays in the flash line.
const flashTTL = 8 * time.Second

func (m *Model) setFlash(s string, isErr bool) { m.flash.set(s, isErr, m.c.now(), flashTTL) }

// FrameRequest asks a running model for the frame it would draw now; the
// reply is sent from the program's own goroutine, so an end-to-end test can
// read the screen without racing the model (send it with Program.Send).
type FrameRequest struct{ Reply chan<- string }

// Update handles one message, applies what the screens asked of the
// root, then lets every screen compute what it shows.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	views, flashes := m.stack.base().views(), m.flash.seq
	cmd := m.update(msg)
	if c := m.apply(); c != nil {
		cmd = tea.Batch(cmd, c)
	}
	// A flash speaks of the view it was given on: another view of the
	// screen (a tab, a plan's diff) clears it, unless it came with it.
	if m.flash.seq == flashes && !slices.Equal(views, m.stack.base().views()) {
		m.flash.text = ""
	}
	if !starting(m.snap) {
		if f := m.stack.base().fetch(); f != nil {
			cmd = tea.Batch(cmd, f)
		}
	}
	m.sync()
	return m, cmd
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case changedMsg, flushMsg, tickMsg:
		return m.updateFeed(msg)
	case editOpenMsg, editDoneMsg, editAppliedMsg:
		return updateEdit(m.c, msg)
	case requestsMsg:
		m.c.host.post(msg...)
		return nil
	case instanceDetailMsg, rgdEventsMsg:
		return m.stack.base().Update(msg) // a read's reply, to the screen that asked
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
			m.c.dark = msg.IsDark()
			_ = m.c.retheme()
		}
		return nil
	case tea.ColorProfileMsg:
		// TERM=dumb strips even reverse video: selections need text marks.
		m.c.marks = msg.Profile == colorprofile.NoTTY
		_ = m.c.retheme()
		return nil
	case resultMsg:
		if msg.err != nil {
			m.setFlash(msg.err.Error(), true)
		} else {
			m.setFlash(msg.text, false)
		}
		return nil
	case tea.MouseClickMsg, tea.MouseWheelMsg:
		if starting(m.snap) || m.stack.top().overlay() {
			return nil
		}
		return m.stack.top().Update(relativeMouse(msg, m.bodyTop))
	case tea.KeyPressMsg:
		return m.updateKey(msg)
	}
	return m.stack.top().Update(msg)
}

// apply does what the screens asked of the root, in order (applying one
// may make a screen ask more).
func (m *Model) apply() tea.Cmd {
	var cmds []tea.Cmd
	// A flash speaks of the screen it was given on ("sorted by name" is
	// not about the instance opened next): leaving or covering a screen
	// clears it, an overlay (help, dialog) keeps it.
	left := func(s screen) {
		if !s.overlay() {
			m.flash.text = ""
		}
	}
	pop := func() {
		if len(m.stack) > 1 {
			s := m.stack.top()
			m.stack = m.stack[:len(m.stack)-1]
			left(s)
		}
	}
	push := func(s screen) {
		m.stack = append(m.stack, s)
		s.Update(snapMsg{m.snap})
		left(s)
	}
	for reqs := m.c.host.take(); len(reqs) > 0; reqs = m.c.host.take() {
		for _, r := range reqs {
			switch r.op {
			case reqPush:
				push(r.s)
			case reqPop:
				pop()
			case reqPopWhile:
				for len(m.stack) > 1 && r.match(m.stack.top()) {
					pop()
				}
			case reqRaise:
				i := slices.IndexFunc(m.stack, r.match)
				if i >= 0 {
					m.stack = m.stack[:i+1]
					continue
				}
				for len(m.stack) > 1 {
					pop()
				}
				push(r.make())
			case reqToList:
				for len(m.stack) > 1 {
					pop()
				}
				cmds = append(cmds, m.stack[0].Update(r.msg))
			case reqFlash:
				m.setFlash(r.text, r.isErr)
			case reqQuit:
				cmds = append(cmds, m.quit())
			}
		}
	}
	return tea.Batch(cmds...)
}

// updateFeed draws the store's changes: at once for the first of a burst,
// then once per frame interval, and at every tick whatever happened to a
// notification.
func (m *Model) updateFeed(msg tea.Msg) tea.Cmd {
	switch msg.(type) {
	case changedMsg:
		if m.feed.flushWait {
			return m.feed.wait()
		}
		if since := time.Since(m.feed.lastFlush); since < m.c.opts.FrameInterval {
			// Leading edge already drawn: draw the rest of the burst once
			// the window ends.
			m.feed.flushWait = true
			return tea.Batch(m.feed.wait(), tea.Tick(m.c.opts.FrameInterval-since, func(time.Time) tea.Msg { return flushMsg{} }))
		}
		m.refresh()
		return tea.Batch(m.feed.wait(), m.feed.tick())
	case flushMsg:
		m.feed.flushWait = false
		m.refresh()
		return m.feed.tick()
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
	return m.feed.tick()
}

// updateKey gives a key to the actions that have the keyboard, else to
// the command line or the screen on top, which says why it does nothing
// or types it.
func (m *Model) updateKey(msg tea.KeyPressMsg) tea.Cmd {
	own, global := m.active()
	pressed := msg.String()
	for _, acts := range [][]action{own, global} {
		if a := m.c.keys.bound(acts, pressed); a != nil {
			if why := a.deniedWhy(); why != "" {
				m.setFlash("not allowed: "+why, true)
				return nil
			}
			return a.do()
		}
	}
	switch {
	case starting(m.snap):
		return nil
	case m.cmd.active:
		return m.cmd.edit(msg)
	}
	return m.stack.top().Update(msg)
}

// starting is true while only the startup or fatal screen shows.
func starting(s *state.Snapshot) bool { return s.Fatal != nil || !s.Startup.Done }

// active are the actions that have the keyboard now: the screen's own,
// then the root's shared ones (only ctrl+c over a modal screen).
func (m *Model) active() (own, global []action) {
	if starting(m.snap) {
		return m.acts.startup, m.acts.force
	}
	if m.cmd.active {
		return m.acts.command, m.acts.force
	}
	own, all := m.stack.top().bindings()
	if all {
		return own, m.acts.global
	}
	return own, m.acts.force
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
// :graph) under the list and what opens from it; none on the graphs
// screens, which show every graph whatever the list's view.
func (m *Model) headerScope() viewScope {
	for i := m.stack.baseIndex(); i >= 0; i-- {
		if v, own := m.stack[i].scope(); own {
			return v
		}
	}
	return viewScope{}
}

// chrome is the status lines above the screens and the flash and footer
// lines below them.
func (m *Model) chrome() (above []string, below int) {
	above = []string{statusLine(m.c, m.snap, m.w, m.headerScope(), m.feed.unsettled)}
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
	return above, len(m.flashLines(m.stack.base())) + 1
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
	m.cmd.prepare(m.w)
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
	bi := m.stack.baseIndex()
	base := m.stack[bi]
	lines = append(lines, base.View())
	lines = append(lines, m.flashLines(base)...)
	lines = append(lines, m.footer())
	frame := strings.Join(lines, "\n")
	for _, s := range m.stack[bi+1:] {
		frame = overlay(frame, s.View(), w, h)
	}
	return frame
}

// flashLines are the rows above the footer: the command line, a prompt,
// or the flash (one row, or a few when it is long).
func (m *Model) flashLines(base screen) []string {
	if m.cmd.active {
		return []string{m.cmd.line}
	}
	if line, typing := base.prompt(); typing || (line != "" && !m.flash.visible()) {
		return []string{line}
	}
	return m.flash.lines(m.c.th, m.w)
}

// footer lists the footer entries of the active actions: whole entries
// only, as many as fit, and the root's (help, quit) always.
func (m *Model) footer() string {
	th, k := m.c.th, m.c.keys
	own, global := m.active()
	render := func(x hint) string {
		if x.denied != "" { // greyed: this user may not
			return th.Dim.Render(x.key + " " + x.desc)
		}
		return th.Key.Render(x.key) + " " + th.KeyDesc.Render(x.desc)
	}
	var tail []string
	tailW := 0
	for _, x := range k.footerHints(global) {
		tail = append(tail, render(x))
		tailW += ansi.StringWidth(x.key+" "+x.desc) + 2
	}
	var parts []string
	used := tailW
	for _, x := range k.footerHints(own) {
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

// globalActions are the root's, which every screen that wants them
// offers (the list, an instance, the graphs, a graph, a plan); modal
// screens offer forceQuit alone.
func (m *Model) globalActions() []action {
	c := m.c
	return offer(
		share("help", "this help", "help", func() tea.Cmd {
			own, global := m.active()
			has := map[string]bool{}
			for _, a := range own {
				has[a.name] = true
			}
			// Grouped: the screen's own keys, then those of every screen.
			hints := append([]hint{{section: "This screen"}}, c.keys.helpHints(own)...)
			hints = append(append(hints, hint{section: "Everywhere"}), c.keys.helpHints(global)...)
			c.host.push(newHelpScreen(c, hints, has))
			return nil
		}),
		m.quitAction(),
		share("forceQuit", "quit from anywhere", "", m.quit),
		// The debug overlay: memory and queue figures under the status line.
		action{name: "debug", keys: []string{"ctrl+g"}, help: "debug line: memory, queue, reconciles in flight (again: hide)",
			do: do0(func() { m.debug = !m.debug })},
		// The user's yes to reconciling with their own credentials,
		// while the header asks it (Mode.Ask, which names the key).
		action{name: "consent", keys: []string{"W"}, help: "yes: reconcile with your credentials, when the header asks", short: "yes, reconcile",
			when: func() bool {
				_, ok := c.b.(WriteConsenter)
				return ok && m.snap != nil && m.snap.Mode.Ask != ""
			},
			do: do0(func() {
				c.b.(WriteConsenter).Consent()
				m.setFlash("reconciling with your credentials", false)
			})},
		share("command", "command: :kind NAME, :ns NAME, :graph NAME, :graphs, :plan FILE, :q (tab completes, up/down: history)", "",
			func() tea.Cmd { return m.cmd.open(m.w) }),
		action{name: "graphs", keys: []string{"D"}, help: "the graphs screen: every ResourceGraphDefinition, its state and instances (also :graphs, :rgd)",
			do: do0(func() { c.host.raise(isGraphs, func() screen { return newGraphsScreen(c) }) })},
	)
}

// quitAction: q quits from the list and backs out of any other screen,
// as in k9s: a user reading an instance does not lose the session to one
// key (ctrl+c and :q quit from anywhere).
func (m *Model) quitAction() action {
	deeper := func() bool { return len(m.stack) > 1 }
	a := share("quit", "quit from the instance list; on any other screen, back out (ctrl+c and :q quit from anywhere)", "quit", func() tea.Cmd {
		if !deeper() {
			return m.quit()
		}
		// The screen's own back (a plan's open diff closes first).
		own, _ := m.stack.top().bindings()
		for i := range own {
			if a := &own[i]; a.name == "back" && a.available() {
				return a.do()
			}
		}
		m.c.host.pop()
		return nil
	})
	a.label = func() string {
		if deeper() {
			return "back"
		}
		return "quit"
	}
	return a
}

// startupActions: nothing to act on yet, only quitting makes sense
// (and ctrl+c, as on every screen).
func (m *Model) startupActions() []action {
	return offer(share("quit", "quit", "quit", m.quit))
}
