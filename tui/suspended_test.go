package tui

import (
	"strings"
	"testing"
)

// A paused instance (kro.run/reconcile: suspended) is counted and shown
// as SUSPENDED with its own glyph, not as unknown.
func TestSuspendedInstanceShown(t *testing.T) {
	snap := fixture()
	snap.Instances[0].State = "SUSPENDED"
	snap.Instances[0].Message = "reconciliation suspended via kro.run/reconcile annotation"
	m, _ := newTestModel(t, snap, Options{}, 160, 30)
	if c := plain(listOf(m).counts()); !strings.Contains(c, "‖ 1 SUSPENDED") || strings.Contains(c, "unknown") {
		t.Errorf("header counts %q", c)
	}
	if out := plain(m.View().Content); !strings.Contains(out, "SUSPENDED") {
		t.Errorf("the table does not show SUSPENDED:\n%s", out)
	}
}
