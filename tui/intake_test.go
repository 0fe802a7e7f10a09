package tui

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/kroscope/kroscope/termtext/termtexttest"
)

// TestIntakeMakesPlantedTextInert: every sequence planted in every string
// of the snapshot (names, messages, errors, logs, conditions, graphs) is
// drawn escaped on every screen the keys reach; none is drawn raw.
func TestIntakeMakesPlantedTextInert(t *testing.T) {
	snap := fixture()
	termtexttest.Plant(snap, termtexttest.Payload())
	m, _ := newTestModel(t, snap, Options{}, 200, 60)
	for _, keys := range [][]string{nil, {"enter"}, {"enter", "y"}, {"enter", "L"}, {"enter", "H"}, {"enter", "t"},
		{"enter", "enter"}, {"esc", "esc", "esc", "D"}, {"enter"}, {"y"}} {
		press(m, keys...)
		f := m.Frame()
		if bad := termtexttest.Unsafe(f); len(bad) > 0 {
			t.Errorf("after %v the frame carries %v raw:\n%s", keys, bad, plain(f))
		}
		if !strings.Contains(plain(f), termtexttest.Sequences[0].Shown[:8]) {
			t.Errorf("after %v the frame shows nothing planted:\n%s", keys, plain(f))
		}
	}
}

// TestBackendErrorsReachTheFlashInert: an error from the API server that
// quotes an object's field (as a conflict or an admission denial does)
// is flashed escaped, and keeps its chain for the code that asks it.
func TestBackendErrorsReachTheFlashInert(t *testing.T) {
	m, f := newTestModel(t, fixture(), Options{}, 200, 40)
	f.deleteErr = fmt.Errorf("admission webhook denied the request: label %q%s: %w", "x", termtexttest.Payload(), fs.ErrPermission)
	pressRun(t, m, "ctrl+d", "right", "enter") // enter on Delete, not the default Cancel
	frame := m.Frame()
	if bad := termtexttest.Unsafe(frame); len(bad) > 0 {
		t.Errorf("the flash carries %v raw:\n%s", bad, plain(frame))
	}
	if !strings.Contains(plain(frame), "admission webhook denied") || !strings.Contains(plain(frame), termtexttest.Sequences[0].Shown) {
		t.Errorf("the flash does not show the error escaped:\n%s", plain(frame))
	}
	if err := inertErr(f.deleteErr); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("the inert error lost its chain: %v", err)
	}
}
