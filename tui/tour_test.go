package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// The tour's findings (#27), each pinned: a key that does nothing on the
// graphs screens says why, as it does on the list and an instance.
func TestGraphsKeysThatDoNothingSayWhy(t *testing.T) {
	m := newModel(eventsBackend{newFake(graphsFixture(t))}, Options{Theme: "dark", ConfigPath: "-", Now: func() time.Time { return fixedNow }})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	for _, c := range []struct {
		keys []string
		want string
	}{
		{[]string{"D", "r"}, "r works on the instance list (i lists the graph's instances): requeue"},
		{[]string{"D", "Z"}, "Z does nothing here: ? lists"},
		{[]string{"D", "y"}, "y works on a graph (enter opens one): the definition's YAML"},
		{[]string{"D", "enter", "ctrl+d"}, "ctrl+d works on the instance list (i lists the graph's instances): delete"},
		{[]string{"D", "enter", "Z"}, "Z does nothing here: ? lists"},
	} {
		pressAll(m, "esc", "esc", "esc")
		pressAll(m, c.keys...)
		if out := plain(m.View().Content); !strings.Contains(out, c.want) {
			t.Errorf("%v: the flash does not say %q:\n%s", c.keys, c.want, out)
		}
	}
}
