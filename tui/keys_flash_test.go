package tui

import (
	"strings"
	"testing"

	"github.com/kroscope/kroscope/engine/state"
)

// A key that does nothing on a screen says why in the flash line: `R` on
// an instance works on the list, an unknown key points at the help, and
// k9s's `d` and `l` describe and show logs.
func TestKeysThatDoNothingSayWhy(t *testing.T) {
	m, _ := newTestModel(t, fixture(), Options{}, 80, 24)
	press(m, "enter", "R")
	if out := plain(m.View().Content); !strings.Contains(out, "R works on the instance list (esc goes back): requeue all shown") {
		t.Fatalf("R on an instance says nothing:\n%s", out)
	}
	press(m, "esc", "Z")
	if out := plain(m.View().Content); !strings.Contains(out, "Z does nothing here: ? lists") {
		t.Fatalf("an unbound key on the list says nothing:\n%s", out)
	}
	press(m, "i")
	if d := detailOf(m); d == nil || d.detail.tab != tabInstance {
		t.Fatal("i on the list does not open the instance pane")
	}
	press(m, "esc", "d")
	if d := detailOf(m); d == nil || d.detail.tab != tabInstance {
		t.Fatal("d (describe) on the list does not open the instance pane")
	}
	press(m, "esc", "l")
	if d := detailOf(m); d == nil || d.detail.tab != tabLogs {
		t.Fatal("l on the list does not open the instance's logs")
	}
}

// Help lists every key each screen answers: it is generated from the
// same tables as dispatch, and every bound action has a description.
func TestHelpListsEveryBoundKey(t *testing.T) {
	for _, c := range []struct {
		name string
		keys []string
	}{{"list", nil}, {"instance", []string{"enter"}}} {
		m, _ := newTestModel(t, fixture(), Options{}, 200, 50)
		press(m, c.keys...)
		own, global := m.active()
		press(m, "?")
		all := plain(m.View().Content)
		for _, acts := range [][]action{own, global} {
			for _, a := range acts {
				if len(m.c.keys.keys[a.name]) == 0 {
					continue
				}
				label := m.c.keys.label(a.name)
				if a.help == "" || !strings.Contains(all, label+" ") {
					t.Errorf("%s: help lacks %s (%s)", c.name, label, a.name)
				}
			}
		}
		// #38: the help listed rules for features the screen lacks; an
		// instance has no filter, and its keys come in two groups.
		if has := strings.Contains(all, "graph:webapp"); has != (c.name == "list") {
			t.Errorf("%s: the filter hint shown %v", c.name, has)
		}
		if !strings.Contains(all, "This screen") || !strings.Contains(all, "Everywhere") {
			t.Errorf("%s: the help is not grouped:\n%s", c.name, all)
		}
	}
}

// A flash speaks of the screen it was given on: opening an instance or
// going back clears it; a dialog over the screen keeps it.
func TestFlashStaysOnItsScreen(t *testing.T) {
	m, _ := newTestModel(t, fixture(), Options{}, 80, 24)
	press(m, "N")
	if !m.flash.visible() {
		t.Fatal("sorting flashes nothing")
	}
	press(m, "enter")
	if m.flash.visible() {
		t.Fatalf("the list's flash %q carried over to the instance", m.flash.text)
	}
	press(m, "H", "y")
	press(m, "R")
	press(m, "esc")
	if m.flash.visible() {
		t.Fatalf("the instance's flash %q carried over to the list", m.flash.text)
	}
}

// The dialog and the footer say the same: ← and → choose, never "←
// cancel" beside a dialog that says "←/→ choose".
func TestDialogFooterAgrees(t *testing.T) {
	m, _ := newTestModel(t, fixture(), Options{}, 120, 30)
	press(m, "j", "ctrl+d")
	lines := strings.Split(strings.TrimRight(plain(m.View().Content), "\n"), "\n")
	footer := lines[len(lines)-1]
	if !strings.Contains(plain(m.View().Content), "←/→ choose") || strings.Contains(footer, "shift+tab cancel") || !strings.Contains(footer, "choose Cancel") {
		t.Fatalf("dialog and footer disagree; footer %q", footer)
	}
}

// A YAML line wider than the pane ends in an ellipsis: a cut never
// passes for the whole value (the viewport cut without one).
func TestDetailCutsShowEllipsis(t *testing.T) {
	snap := fixture()
	shop := snap.Instances[1]
	shop.Resources[0].Observed = pk(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "shop-config", "namespace": "team-a", "annotations": map[string]any{
			"example.com/long": "a long value " + strings.Repeat("that goes on ", 12) + "END"}}})
	m, _ := newTestModel(t, snap, Options{}, 80, 24)
	press(m, "j", "enter", "y", "y")
	lines := strings.Split(plain(m.View().Content), "\n")
	found := false
	for _, l := range lines {
		if strings.Contains(l, "example.com/long") {
			found = strings.HasSuffix(l, "…") && !strings.Contains(l, "END")
		}
	}
	if !found {
		t.Fatalf("the cut YAML line does not end in …:\n%s", strings.Join(lines, "\n"))
	}
}

// The error flash names the resource once: the instance's message already
// begins with it.
func TestErrorFlashSaysTheResourceOnce(t *testing.T) {
	snap := fixture()
	api := snap.Instances[2]
	api.LastError = &state.ErrorMemory{Err: api.Message, Since: at(-30), At: at(-1), Attempts: 4, Resource: "deployment"}
	m, _ := newTestModel(t, snap, Options{}, 200, 30)
	press(m, "e")
	if got := m.flash.text; strings.Contains(got, "deployment: deployment:") || !strings.HasPrefix(got, "error in team-b/api deployment: Deployment.apps") {
		t.Fatalf("flash = %q", got)
	}
}
