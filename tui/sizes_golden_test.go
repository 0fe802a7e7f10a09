package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/kroscope/kroscope/engine/state"
)

// goldenSizes are the terminals every main screen is pinned at: the
// smallest usable, the default and a wide one.
var goldenSizes = [][2]int{{60, 15}, {80, 24}, {200, 50}}

// dividing is the fixture with a FAILED instance whose error quotes an
// expression with " / " in it: a wrap must keep every token.
func dividing() *state.Snapshot {
	s := fixture()
	api := s.Instances[2]
	api.State = "FAILED"
	api.Message = "deployment: resource deployment field spec.replicas: division by zero (in ${string(schema.spec.capacity / schema.spec.shards)})"
	api.Resources[2].State = "FAILED"
	api.Resources[2].Err = "resource deployment field spec.replicas: division by zero (in ${string(schema.spec.capacity / schema.spec.shards)})"
	return s
}

// TestGoldenSizes renders the main screens at each of goldenSizes: no
// line wider than the terminal, no more lines than it has, and an
// overlay keeps its borders.
func TestGoldenSizes(t *testing.T) {
	screens := []struct {
		name string
		snap func() *state.Snapshot
		keys []string
		box  bool // an overlay: both its corners must show
	}{
		{name: "instances", snap: fixture},
		{name: "instances_sorted_reconciled", snap: fixture, keys: []string{"O"}},
		{name: "instances_kind_chips", snap: fixture, keys: []string{":", "k", "i", "n", "d", " ", "w", "e", "b", "a", "p", "p", "enter", ":", "n", "s", " ", "t", "e", "a", "m", "-", "a", "enter"}},
		{name: "command_tab", snap: fixture, keys: []string{":", "tab"}},
		{name: "instance_failed", snap: dividing, keys: []string{"j", "j", "enter", "j", "j"}},
		{name: "instance_timeline_failed", snap: dividing, keys: []string{"j", "j", "enter", "t"}},
		{name: "instance_yaml", snap: fixture, keys: []string{"j", "enter", "y", "y"}},
		{name: "instance_history", snap: fixture, keys: []string{"j", "enter", "H"}},
		{name: "help", snap: fixture, keys: []string{"?"}, box: true},
		{name: "help_instance", snap: fixture, keys: []string{"enter", "?"}, box: true},
		{name: "delete_dialog", snap: fixture, keys: []string{"j", "ctrl+d"}, box: true},
	}
	for _, sz := range goldenSizes {
		for _, c := range screens {
			w, h := sz[0], sz[1]
			t.Run(fmt.Sprintf("%s_%dx%d", c.name, w, h), func(t *testing.T) {
				m, _ := newTestModel(t, c.snap(), Options{}, w, h)
				press(m, c.keys...)
				out := plain(m.View().Content)
				for i, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
					if lw := ansi.StringWidth(l); lw > w {
						t.Errorf("line %d is %d cells wide, terminal is %d: %q", i, lw, w, l)
					}
				}
				if n := strings.Count(out, "\n"); n > h {
					t.Errorf("frame has %d lines, terminal has %d", n, h)
				}
				if c.box && (!strings.Contains(out, "╭") || !strings.Contains(out, "╯")) {
					t.Errorf("the overlay lost its borders:\n%s", out)
				}
				golden.RequireEqual(t, out)
			})
		}
	}
}
