// Package tui is kroscope's terminal UI: it renders the engine's observable
// state (engine/state) and calls a narrow Backend for actions. It never
// talks to the API server itself.
package tui

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/theme"
)

// Backend is all the TUI may ask of the engine (the TUI never calls the API server).
type Backend interface {
	Snapshot() *state.Snapshot
	Subscribe() (<-chan struct{}, func()) // coalesced change notifications (state.Store semantics)
	Requeue(key state.InstanceKey) error
	RequeueAll(filter func(*state.Instance) bool) (int, error)
	Delete(ctx context.Context, key state.InstanceKey) error
}

// WriteConsenter is a backend that asks before it writes with the user's
// credentials (the engine's Consent): W says yes while Mode.Ask is set.
type WriteConsenter interface{ Consent() }

// Options configure the UI. Zero values are sensible defaults.
type Options struct {
	// Theme is a theme name (see theme.Names); "" takes the config file's,
	// then "auto".
	Theme   string
	ASCII   bool
	NoColor bool // also on when the NO_COLOR environment variable is set (Run)
	// ConfigPath is the config file; "" is DefaultConfigPath(). Set it to
	// "-" to read no config file.
	ConfigPath string

	// LightBackground tells an "auto" theme the terminal is light before
	// the terminal answers the program's background query (most are dark,
	// so dark is assumed until then).
	LightBackground bool
	// Now is the clock (tests pin it); nil is time.Now.
	Now func() time.Time
	// FrameInterval is the minimum time between two redraws caused by state
	// changes; a burst of changes inside it becomes one frame. 0 is 40ms (25 frames a second
	// at most), which keeps change-to-screen latency well under 100ms.
	FrameInterval time.Duration
	// DeleteTimeout bounds one Delete call. 0 is 30s.
	DeleteTimeout time.Duration
	// NoMouse disables mouse reporting.
	NoMouse bool
}

// Run runs the program until the user quits or ctx ends. Logs never go to
// the terminal under the UI (the engine's logger feeds Snapshot.Logs). A bad
// config file or theme never stops it: the UI starts on the defaults and
// says what was wrong in its flash line.
func Run(ctx context.Context, b Backend, opts Options) error {
	if os.Getenv("NO_COLOR") != "" {
		opts.NoColor = true
	}
	popts := []tea.ProgramOption{tea.WithContext(ctx)}
	if opts.NoColor {
		popts = append(popts, tea.WithColorProfile(colorprofile.Ascii))
	}
	m := newModel(b, opts)
	// The standard logger writes to stderr, under the UI; silence it while
	// the UI owns the terminal (the engine's logger feeds Snapshot.Logs).
	prev := log.Writer()
	log.SetOutput(io.Discard)
	defer log.SetOutput(prev)
	_, err := tea.NewProgram(m, popts...).Run()
	if err != nil && ctx.Err() != nil {
		return nil // cancelled from outside: a normal end
	}
	if err != nil {
		return fmt.Errorf("terminal UI: %w", err)
	}
	return nil
}

// retheme builds the theme the options name for the background seen so
// far, with text marks where the terminal draws no attribute.
func (c *common) retheme() error {
	th, err := theme.New(theme.Options{Name: c.opts.Theme, IsDark: c.dark, NoColor: c.opts.NoColor || c.marks, ASCII: c.opts.ASCII, Marks: c.marks})
	if err == nil {
		c.th = th // panes key their caches by the theme
	}
	return err
}

// NewModel returns the root tea.Model (for teatest and e2e tests). A bad
// config file or theme name does not stop it: the model starts with the
// defaults and shows the problem in its flash line.
func NewModel(b Backend, opts Options) tea.Model { return newModel(b, opts) }

// configFlashTTL keeps a config problem on screen long enough to read.
const configFlashTTL = 30 * time.Second

func newModel(b Backend, opts Options) *Model {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.FrameInterval <= 0 {
		opts.FrameInterval = 40 * time.Millisecond
	}
	if opts.DeleteTimeout <= 0 {
		opts.DeleteTimeout = 30 * time.Second
	}
	var cfg Config
	var probs []Problem
	if opts.ConfigPath != "-" {
		path := opts.ConfigPath
		if path == "" {
			path = DefaultConfigPath()
		}
		cfg, probs = LoadConfig(path)
	}
	if opts.Theme == "" {
		opts.Theme = cfg.Theme
	}
	opts.ASCII = opts.ASCII || cfg.ASCII
	var warn string
	m := &Model{c: &common{b: b, opts: opts, dark: !opts.LightBackground, keys: newKeymap(cfg.Keys, opts.ASCII)}}
	if err := m.c.retheme(); err != nil {
		warn = "--theme: " + err.Error() + "; using auto"
		m.c.opts.Theme = theme.Auto
		_ = m.c.retheme()
	}
	m.init()
	if s := problemsFlash(probs, opts.ConfigPath); s != "" {
		m.flash.set(s, true, m.c.now(), configFlashTTL)
		m.flash.whole = configCheckCommand(opts.ConfigPath)
	} else if warn != "" {
		m.flash.set(warn, true, m.c.now(), configFlashTTL)
	}
	m.sync()
	return m
}
