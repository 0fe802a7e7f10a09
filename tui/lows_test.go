package tui

import (
	"strings"
	"testing"

	"github.com/kroscope/kroscope/engine/state"
)

// A flash speaks of the view it was given on: another tab clears it.
func TestFlashClearsOnAnotherView(t *testing.T) {
	m, _ := newTestModel(t, fixture(), Options{}, 100, 30)
	press(m, "e")
	if !m.flash.visible() {
		t.Fatal("e flashed nothing")
	}
	press(m, "tab")
	if m.flash.visible() {
		t.Errorf("the flash %q stayed on another tab", m.flash.text)
	}
}

// A deleted instance's screen offers back only: its keys had nothing
// to act on.
func TestGoneInstanceOffersBackOnly(t *testing.T) {
	m, f := newTestModel(t, fixture(), Options{}, 100, 30)
	press(m, "j", "enter") // team-a/shop
	gone := fixture()
	gone.Instances = slicesWithout(gone.Instances, "shop")
	gone.Version++
	f.snap = gone
	m.Update(flushMsg{})
	foot := footerLine(plain(m.Frame()))
	if !strings.Contains(foot, "esc back") || strings.Contains(foot, "requeue") || strings.Contains(foot, "yaml") {
		t.Errorf("a gone instance's footer: %q", foot)
	}
}

func slicesWithout(ins []*state.Instance, name string) []*state.Instance {
	var out []*state.Instance
	for _, in := range ins {
		if in.Key.Name != name {
			out = append(out, in)
		}
	}
	return out
}

// A key the dialog has no action for said nothing (found on the tour).
func TestDialogExplainsOtherKeys(t *testing.T) {
	m, _ := newTestModel(t, fixture(), Options{}, 100, 30)
	press(m, "j", "ctrl+d", "r")
	if out := plain(m.Frame()); !strings.Contains(out, "r does nothing in this dialog: ←/→ choose") {
		t.Errorf("r in the delete dialog:\n%s", out)
	}
}
