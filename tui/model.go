package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/theme"
)

type screen int

const (
	scrInstances screen = iota
	scrInstance
)

type pane int

const (
	paneGraph pane = iota
	paneDetail
)

// detailTab is what the right pane of the instance screen shows.
type detailTab int

const (
	tabInspect detailTab = iota
	tabYAML
	tabHistory
	tabTimeline
	tabLogs
	numTabs
)

func (t detailTab) String() string {
	return [...]string{"Inspect", "YAML", "History", "Timeline", "Logs"}[t]
}

// yamlMode is what the YAML tab shows; y cycles it.
type yamlMode int

const (
	yamlDesired yamlMode = iota
	yamlObserved
	yamlDiff
)

func (y yamlMode) String() string { return [...]string{"desired", "observed", "diff"}[y] }

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

// dialog is a modal confirmation. Cancel is the default choice.
type dialog struct {
	title   string
	lines   []string
	confirm string // the confirm button's label
	choice  int    // 0 cancel, 1 confirm
	onYes   func(m *Model) tea.Cmd
}

// Model is the root model. It is a pointer so that View can keep its render
// caches between frames.
type Model struct {
	b    Backend
	opts Options
	th   *theme.Theme
	keys KeyMap

	w, h int
	snap *state.Snapshot

	// Feeding.
	sub       <-chan struct{}
	unsub     func()
	flushWait bool      // a flush tick is scheduled
	lastFlush time.Time // when the snapshot was last taken
	ticking   bool      // the spinner/clock tick is armed
	frame     int       // the shared spinner's frame
	spinning  bool      // something visible is in progress
	skipDraw  bool      // the last Update changed nothing visible
	lastFrame string

	// Instances screen.
	scr       screen
	rows      []*state.Instance
	rowsFor   uint64 // snapshot version rows were built from
	rowsQuery string
	rowsSort  sortKey
	sortBy    sortKey
	cursor    int
	offset    int
	selKey    state.InstanceKey
	filter    textinput.Model
	filtering bool
	query     string
	rowCache  map[state.InstanceKey]*rowEntry
	showLogs  bool

	// Instance screen.
	cur         state.InstanceKey
	node        int
	nodeOffset  int
	nodeID      string
	focus       pane
	tab         detailTab
	ymode       yamlMode
	vp          viewport.Model
	vpKey       string
	revealed    map[string]bool
	graphCache  graphEntry
	detailKey   detailKey
	detailLines []string
	graphKey    graphKey
	graphLines  []string

	// Overlays.
	showHelp bool
	dlg      *dialog
	flash    string
	flashErr bool
	flashAt  time.Time

	// Layout of the last frame, for mouse clicks.
	bodyTop  int
	graphW   int
	quitting bool
}

func (m *Model) init() {
	m.filter = textinput.New()
	m.filter.Prompt = "/"
	m.filter.Placeholder = "text, state:error, kind:WebApp, ns:team-a"
	m.vp = viewport.New()
	m.vp.KeyMap = viewport.KeyMap{} // keys go through our keymap
	m.rowCache = map[state.InstanceKey]*rowEntry{}
	m.revealed = map[string]bool{}
	m.refresh()
}

// Init subscribes to the backend and starts the clock.
func (m *Model) Init() tea.Cmd {
	m.sub, m.unsub = m.b.Subscribe()
	// Changes made between NewModel and now signalled nobody: catch up.
	m.refresh()
	cmds := []tea.Cmd{m.wait(), m.tick()}
	if m.opts.Theme == "" || m.opts.Theme == theme.Auto {
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	return tea.Batch(cmds...)
}

func (m *Model) wait() tea.Cmd {
	ch := m.sub
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
	if m.ticking {
		return nil
	}
	m.ticking = true
	d := time.Second
	if m.spinning {
		d = 100 * time.Millisecond
	}
	return tea.Tick(d, func(time.Time) tea.Msg { return tickMsg{} })
}

func (m *Model) now() time.Time { return m.opts.Now() }

// refresh takes a new snapshot and rebuilds what depends on it.
func (m *Model) refresh() {
	m.snap = m.b.Snapshot()
	if m.snap == nil {
		m.snap = &state.Snapshot{}
	}
	m.lastFlush = time.Now()
	m.rebuildRows()
	m.spinning = false
	for _, in := range m.rows {
		if theme.ClassOf(in.State) == theme.ClassProgress {
			m.spinning = true
			break
		}
	}
	if in := m.instance(); in != nil && !m.spinning {
		for i := range in.Resources {
			if theme.ClassOf(in.Resources[i].State) == theme.ClassProgress {
				m.spinning = true
				break
			}
		}
	}
	if m.scr == scrInstance {
		m.syncNode()
	}
}

// instance returns the instance the instance screen shows (or the selected
// row on the instances screen), or nil.
func (m *Model) instance() *state.Instance {
	if m.scr == scrInstance {
		return m.snap.Instance(m.cur)
	}
	if m.cursor >= 0 && m.cursor < len(m.rows) {
		return m.rows[m.cursor]
	}
	return nil
}

// flashTTL is how long a result stays in the flash line.
const flashTTL = 8 * time.Second

func (m *Model) setFlash(s string, isErr bool) {
	m.flash, m.flashErr, m.flashAt = s, isErr, m.now()
}

// FrameRequest asks a running model for the frame it would draw now; the
// reply is sent from the program's own goroutine, so an end-to-end test can
// read the screen without racing the model (send it with Program.Send).
type FrameRequest struct{ Reply chan<- string }

// Update handles one message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	m.skipDraw = false
	switch msg := msg.(type) {
	case changedMsg:
		if m.flushWait {
			m.skipDraw = true
			return m, m.wait()
		}
		if since := time.Since(m.lastFlush); since < m.opts.FrameInterval {
			// Leading edge already drawn: draw the rest of the burst once
			// the window ends.
			m.flushWait = true
			m.skipDraw = true
			return m, tea.Batch(m.wait(), tea.Tick(m.opts.FrameInterval-since, func(time.Time) tea.Msg { return flushMsg{} }))
		}
		m.refresh()
		return m, tea.Batch(m.wait(), m.tick())
	case flushMsg:
		m.flushWait = false
		m.refresh()
		return m, m.tick()
	case tickMsg:
		m.ticking = false
		if m.spinning {
			m.frame++
		}
		if m.flash != "" && m.now().Sub(m.flashAt) > flashTTL {
			m.flash = ""
		}
		// Belt and braces: never show a stale state for longer than a tick,
		// whatever happened to a notification.
		if !m.flushWait && m.b.Snapshot().Version != m.snap.Version {
			m.refresh()
		}
		return m, m.tick()
	case FrameRequest:
		msg.Reply <- m.render()
		m.skipDraw = true
		return m, nil
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
		m.vpKey = ""
		return m, nil
	case tea.BackgroundColorMsg:
		if m.opts.Theme == "" || m.opts.Theme == theme.Auto {
			if th, err := theme.New(theme.Options{Name: theme.Auto, IsDark: msg.IsDark(), NoColor: m.opts.NoColor, ASCII: m.opts.ASCII}); err == nil {
				m.th = th
				m.rowCache = map[state.InstanceKey]*rowEntry{}
				m.graphCache = graphEntry{}
				m.graphLines, m.detailLines = nil, nil
				m.vpKey = ""
			}
		}
		return m, nil
	case resultMsg:
		if msg.err != nil {
			m.setFlash(msg.err.Error(), true)
		} else {
			m.setFlash(msg.text, false)
		}
		return m, nil
	case tea.MouseClickMsg:
		m.click(msg.Mouse())
		return m, nil
	case tea.MouseWheelMsg:
		if msg.Mouse().Button == tea.MouseWheelUp {
			m.move(-3)
		} else if msg.Mouse().Button == tea.MouseWheelDown {
			m.move(3)
		}
		return m, nil
	case tea.KeyPressMsg:
		return m, m.key(msg)
	}
	if m.filtering {
		var cmd tea.Cmd
		m.filter, cmd = m.filter.Update(msg)
		return m, cmd
	}
	m.skipDraw = true
	return m, nil
}

func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := m.keys
	if m.snap.Fatal != nil || !m.snap.Startup.Done {
		// Nothing to act on yet: only quitting makes sense.
		if key.Matches(msg, k.Quit) {
			return m.quit()
		}
		m.skipDraw = true
		return nil
	}
	if m.dlg != nil {
		return m.dialogKey(msg)
	}
	if m.showHelp {
		if key.Matches(msg, k.Quit) && msg.String() == "ctrl+c" {
			return m.quit()
		}
		m.showHelp = false
		return nil
	}
	if m.filtering {
		switch msg.String() {
		case "enter":
			m.filtering = false
			m.filter.Blur()
			return nil
		case "esc":
			m.filtering = false
			m.filter.Blur()
			m.filter.SetValue("")
			m.setQuery("")
			return nil
		case "ctrl+c":
			return m.quit()
		}
		var cmd tea.Cmd
		m.filter, cmd = m.filter.Update(msg)
		m.setQuery(m.filter.Value())
		return cmd
	}
	switch {
	case key.Matches(msg, k.Quit):
		return m.quit()
	case key.Matches(msg, k.Help):
		m.showHelp = true
	case key.Matches(msg, k.Up):
		m.move(-1)
	case key.Matches(msg, k.Down):
		m.move(1)
	case key.Matches(msg, k.PageUp):
		m.move(-m.pageSize())
	case key.Matches(msg, k.PageDown):
		m.move(m.pageSize())
	case key.Matches(msg, k.Top):
		m.move(-1 << 30)
	case key.Matches(msg, k.Bottom):
		m.move(1 << 30)
	case key.Matches(msg, k.Open):
		m.open()
	case key.Matches(msg, k.Back):
		m.back()
	case key.Matches(msg, k.Tab):
		if m.scr == scrInstance {
			m.focus = 1 - m.focus
		} else {
			m.showLogs = !m.showLogs
		}
	case key.Matches(msg, k.NextTab):
		m.setTab((m.tab + 1) % numTabs)
	case key.Matches(msg, k.PrevTab):
		m.setTab((m.tab + numTabs - 1) % numTabs)
	case key.Matches(msg, k.YAML):
		if m.scr == scrInstances {
			m.open()
		}
		if m.scr == scrInstance {
			if m.tab == tabYAML {
				m.ymode = (m.ymode + 1) % 3
			}
			m.setTab(tabYAML)
		}
	case key.Matches(msg, k.History):
		m.openTab(tabHistory)
	case key.Matches(msg, k.Timeline):
		m.openTab(tabTimeline)
	case key.Matches(msg, k.Logs):
		if m.scr == scrInstances {
			m.showLogs = !m.showLogs
		} else {
			m.setTab(tabLogs)
		}
	case key.Matches(msg, k.Filter):
		if m.scr == scrInstances {
			m.filtering = true
			m.filter.SetValue(m.query)
			m.filter.CursorEnd()
			return m.filter.Focus()
		}
	case key.Matches(msg, k.Sort):
		if m.scr == scrInstances {
			m.sortBy = (m.sortBy + 1) % numSorts
			m.rebuildRows()
			m.setFlash("sorted by "+m.sortBy.String(), false)
		}
	case key.Matches(msg, k.Requeue):
		return m.requeue()
	case key.Matches(msg, k.RequeueAll):
		return m.requeueAll()
	case key.Matches(msg, k.Delete):
		m.askDelete()
	case key.Matches(msg, k.NextError):
		m.nextError()
	case key.Matches(msg, k.Reveal):
		m.askReveal()
	default:
		m.skipDraw = true
	}
	return nil
}

func (m *Model) quit() tea.Cmd {
	m.quitting = true
	if m.unsub != nil {
		m.unsub()
		m.unsub = nil
	}
	return tea.Quit
}

func (m *Model) openTab(t detailTab) {
	if m.scr == scrInstances {
		m.open()
	}
	if m.scr == scrInstance {
		m.setTab(t)
	}
}

func (m *Model) setTab(t detailTab) {
	if m.scr != scrInstance {
		return
	}
	m.tab = t
	m.focus = paneDetail
	m.vpKey = ""
}

func (m *Model) pageSize() int { return max(m.h-6, 1) }

// move moves the cursor of the focused list, or scrolls the detail pane.
func (m *Model) move(d int) {
	if m.scr == scrInstances {
		m.cursor = clamp(m.cursor+d, 0, len(m.rows)-1)
		if m.cursor >= 0 && m.cursor < len(m.rows) {
			m.selKey = m.rows[m.cursor].Key
		}
		return
	}
	if m.focus == paneDetail {
		if d < 0 {
			m.vp.ScrollUp(-d)
		} else {
			m.vp.ScrollDown(d)
		}
		return
	}
	in := m.instance()
	if in == nil {
		return
	}
	order := m.graphOrder(in)
	m.node = clamp(m.node+d, 0, len(order)-1)
	if m.node >= 0 && m.node < len(order) {
		m.nodeID = order[m.node]
	}
	m.vpKey = ""
}

func clamp(v, lo, hi int) int {
	if hi < lo {
		return lo
	}
	return min(max(v, lo), hi)
}

// open drills into the selected instance, or from the graph into the
// selected node's inspector.
func (m *Model) open() {
	switch m.scr {
	case scrInstances:
		in := m.instance()
		if in == nil {
			return
		}
		m.scr = scrInstance
		m.cur = in.Key
		m.node, m.nodeOffset, m.nodeID = 0, 0, ""
		m.focus, m.tab, m.ymode = paneGraph, tabInspect, yamlDesired
		m.vpKey = ""
		m.syncNode()
	case scrInstance:
		if m.focus == paneGraph {
			m.setTab(tabInspect)
		}
	}
}

func (m *Model) back() {
	switch {
	case m.scr == scrInstance && m.snap.Instance(m.cur) == nil:
		// The instance is gone (deleted, here or elsewhere): its panes
		// show nothing, so one esc goes back, as its header says.
		m.scr, m.focus = scrInstances, paneGraph
	case m.scr == scrInstance && m.focus == paneDetail:
		m.focus = paneGraph
	case m.scr == scrInstance:
		m.scr = scrInstances
	case m.query != "":
		m.filter.SetValue("")
		m.setQuery("")
	case m.showLogs:
		m.showLogs = false
	}
}

// syncNode keeps the node cursor on the same resource id across updates.
func (m *Model) syncNode() {
	in := m.snap.Instance(m.cur)
	if in == nil {
		return
	}
	order := m.graphOrder(in)
	for i, id := range order {
		if id == m.nodeID {
			m.node = i
			return
		}
	}
	m.node = clamp(m.node, 0, len(order)-1)
	if m.node < len(order) {
		m.nodeID = order[m.node]
	}
}

func (m *Model) selectedResource() *state.Resource {
	in := m.instance()
	if in == nil || m.scr != scrInstance {
		return nil
	}
	return in.Resource(m.nodeID)
}

func (m *Model) requeue() tea.Cmd {
	in := m.instance()
	if in == nil {
		m.setFlash("nothing selected to requeue", true)
		return nil
	}
	if err := m.b.Requeue(in.Key); err != nil {
		m.setFlash(fmt.Sprintf("requeue %s: %v", name(in), err), true)
		return nil
	}
	m.setFlash("requeued "+name(in), false)
	return nil
}

func (m *Model) requeueAll() tea.Cmd {
	q := parseQuery(m.query)
	n, err := m.b.RequeueAll(q.match)
	if err != nil {
		m.setFlash(fmt.Sprintf("requeue all: %v", err), true)
		return nil
	}
	m.setFlash(fmt.Sprintf("requeued %d instance(s)", n), false)
	return nil
}

func name(in *state.Instance) string { return keyName(in.Key) }

// keyName is "namespace/name", or just the name of a cluster-scoped
// instance.
func keyName(k state.InstanceKey) string {
	if k.Namespace == "" {
		return k.Name
	}
	return k.Namespace + "/" + k.Name
}

// deletePlan lists what deleting the instance removes, in order: its
// resources in reverse topological order (externals are never deleted),
// then the instance itself.
func deletePlan(in *state.Instance, g theme.Glyphs) (lines []string, kept []string) {
	n := 0
	for i := len(in.Resources) - 1; i >= 0; i-- {
		r := in.Resources[i]
		if r.External {
			kept = append(kept, r.ID)
			continue
		}
		if r.State == "SKIPPED" || r.Name == "" {
			continue // never created
		}
		n++
		obj := r.Name
		if r.Namespace != "" {
			obj = r.Namespace + "/" + r.Name
		}
		lines = append(lines, fmt.Sprintf("%d. %s %s %s %s", n, r.ID, g.Arrow, r.Kind, obj))
	}
	n++
	lines = append(lines, fmt.Sprintf("%d. the instance %s %s", n, in.Kind, name(in)))
	return lines, kept
}

func (m *Model) askDelete() {
	in := m.instance()
	if in == nil {
		m.setFlash("nothing selected to delete", true)
		return
	}
	plan, kept := deletePlan(in, m.th.G)
	lines := append([]string{"This deletes, in order:"}, plan...)
	if len(kept) > 0 {
		lines = append(lines, "", "Kept (external): "+strings.Join(kept, ", "))
	}
	key := in.Key
	label := name(in)
	m.dlg = &dialog{
		title:   fmt.Sprintf("Delete %s %s?", in.Kind, label),
		lines:   lines,
		confirm: "Delete",
		onYes: func(m *Model) tea.Cmd {
			m.setFlash("deleting "+label+m.th.G.Ellipsis, false)
			b, timeout := m.b, m.opts.DeleteTimeout
			return func() tea.Msg {
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				defer cancel()
				if err := b.Delete(ctx, key); err != nil {
					return resultMsg{err: fmt.Errorf("delete %s: %w", label, err)}
				}
				return resultMsg{text: "deleted " + label + " (resources follow in reverse order)"}
			}
		},
	}
}

func (m *Model) askReveal() {
	r := m.selectedResource()
	if r == nil || !isSecret(r) {
		m.setFlash("select a Secret to reveal its data", true)
		return
	}
	id := m.cur.String() + "#" + r.ID
	if m.revealed[id] {
		delete(m.revealed, id)
		m.vpKey = ""
		m.setFlash("secret data hidden", false)
		return
	}
	m.dlg = &dialog{
		title:   fmt.Sprintf("Reveal the data of Secret %s?", r.ID),
		lines:   []string{"Its values will be shown in clear on this screen."},
		confirm: "Reveal",
		onYes: func(m *Model) tea.Cmd {
			m.revealed[id] = true
			m.vpKey = ""
			m.setFlash("secret data revealed (x hides it)", false)
			return nil
		},
	}
}

func (m *Model) dialogKey(msg tea.KeyPressMsg) tea.Cmd {
	d := m.dlg
	switch {
	case msg.String() == "ctrl+c":
		return m.quit()
	case key.Matches(msg, m.keys.Back):
		m.dlg = nil
		m.setFlash("cancelled", false)
	case key.Matches(msg, m.keys.Confirm):
		m.dlg = nil
		if d.choice == 1 {
			return d.onYes(m)
		}
		m.setFlash("cancelled", false)
	case key.Matches(msg, m.keys.Left):
		d.choice = 0
	case key.Matches(msg, m.keys.Right):
		d.choice = 1
	}
	return nil
}

// nextError selects the next resource in error (across instances from the
// instances screen) and opens its error.
func (m *Model) nextError() {
	if m.scr == scrInstance {
		in := m.instance()
		if in != nil {
			order := m.graphOrder(in)
			for step := 1; step <= len(order); step++ {
				i := (m.node + step) % len(order)
				if r := in.Resource(order[i]); r != nil && theme.ClassOf(r.State) == theme.ClassError {
					m.node, m.nodeID = i, order[i]
					m.setTab(tabInspect)
					m.setFlash("error in "+r.ID, true)
					return
				}
			}
		}
		if in != nil && theme.ClassOf(in.State) == theme.ClassError {
			m.setFlash("instance error: "+in.Message, true)
			return
		}
		m.setFlash("no resource in error", false)
		return
	}
	for step := 1; step <= len(m.rows); step++ {
		i := (m.cursor + step) % len(m.rows)
		in := m.rows[i]
		if theme.ClassOf(in.State) != theme.ClassError {
			continue
		}
		m.cursor, m.selKey = i, in.Key
		m.open()
		m.node = -1
		for j, id := range m.graphOrder(in) {
			if r := in.Resource(id); r != nil && theme.ClassOf(r.State) == theme.ClassError {
				m.node, m.nodeID = j, id
				break
			}
		}
		if m.node < 0 {
			m.node = 0
			m.syncNode()
		}
		m.setTab(tabInspect)
		m.setFlash("error in "+name(in), true)
		return
	}
	m.setFlash("no instance in error", false)
}

// clickTab switches to the tab label under x (relative to the tab bar).
func (m *Model) clickTab(x int) {
	sepW := len([]rune(" " + m.th.G.Sep + " "))
	pos := 0
	for t := detailTab(0); t < numTabs; t++ {
		label := t.String()
		if t == tabYAML {
			label += " (" + m.ymode.String() + ")"
		}
		w := len([]rune(label))
		if x >= pos && x < pos+w {
			m.setTab(t)
			return
		}
		pos += w + sepW
	}
}

// click selects the row or node under the mouse.
func (m *Model) click(mo tea.Mouse) {
	if m.dlg != nil || m.showHelp || mo.Button != tea.MouseLeft {
		return
	}
	row := mo.Y - m.bodyTop
	if m.scr == scrInstances {
		if i := m.offset + row; row >= 0 && i < len(m.rows) {
			m.cursor, m.selKey = i, m.rows[i].Key
		}
		return
	}
	// Side by side, the detail pane starts past the graph and separator;
	// narrow, it fills the width while focused.
	side := m.graphW > 0
	if side && mo.X > m.graphW || !side && m.focus == paneDetail {
		detailX := 0
		if side {
			detailX = m.graphW + 1
		}
		if row >= -1 {
			m.focus = paneDetail
		}
		if row == -1 { // the tab bar
			m.clickTab(mo.X - detailX)
		}
		return
	}
	if row < 0 {
		return
	}
	in := m.instance()
	if in == nil {
		return
	}
	order := m.graphOrder(in)
	if i := m.nodeOffset + row; i >= 0 && i < len(order) {
		m.node, m.nodeID, m.focus = i, order[i], paneGraph
		m.vpKey = ""
	}
}
