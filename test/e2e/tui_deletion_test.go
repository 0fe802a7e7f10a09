package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/tui"
)

// TestTUIDeletionHeldByAFinalizer deletes an instance from the terminal UI
// while another controller's finalizer holds its last child: the screen
// keeps the DELETING instance and names that child and its finalizer as
// the blocker, the earlier layers wait for it, and once the finalizer is
// released the instance leaves the table (only after the API server
// removed it).
func TestTUIDeletionHeldByAFinalizer(t *testing.T) {
	rig := newEngRig(t)
	run, gvr := rig.serveChain("tui-held", "TuiHeld")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rig.createInstance(gvr, "TuiHeld", "held", nil)
	run.waitFor(time.Minute, "the instance ACTIVE", func(s *state.Snapshot) bool {
		for _, in := range s.Instances {
			if in.Key.Name == "held" && in.State == "ACTIVE" {
				return true
			}
		}
		return false
	})

	// Another controller's finalizer on the last child (c, deleted first).
	cms := rig.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(rig.ns)
	const fin = "kroscope.test/hold"
	if _, err := cms.Patch(ctx, "held-a-b-c", types.MergePatchType, []byte(`{"metadata":{"finalizers":["`+fin+`"]}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("adding the finalizer: %v", err)
	}

	m := tui.NewModel(run.e, tui.Options{ConfigPath: "-", Theme: "dark", ASCII: true, NoColor: true})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(240, 40),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	t.Cleanup(func() { _ = tm.Quit() })
	screenUntil(t, tm, "the instance row", func(s string) bool { return strings.Contains(s, "/held") })
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	screenUntil(t, tm, "the instance screen", func(s string) bool { return strings.Contains(s, "GRAPH") })
	// ctrl+d, move to the Delete button, confirm.
	tm.Send(tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl})
	tm.Send(tea.KeyPressMsg{Code: tea.KeyRight})
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})

	screen := screenUntil(t, tm, "c named as the blocker", func(s string) bool {
		return strings.Contains(s, "held by finalizer "+fin) && strings.Contains(s, "DELETING")
	})
	var cLine string
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, "held by finalizer") {
			cLine = l
		}
	}
	if !strings.Contains(cLine, " c ") || !strings.Contains(cLine, "held-a-b-c") {
		t.Fatalf("the blocker is not shown on c's row %q:\n%s", cLine, screen)
	}
	if !strings.Contains(screen, "waiting for c to be deleted first") { // named by id, not by object
		t.Fatalf("the earlier layers do not say they wait for c:\n%s", screen)
	}
	if strings.Contains(screen, "is gone") {
		t.Fatalf("the instance is called gone while its child is held:\n%s", screen)
	}

	// Release the finalizer: the teardown finishes and the instance leaves.
	if _, err := cms.Patch(ctx, "held-a-b-c", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("removing the finalizer: %v", err)
	}
	screenUntil(t, tm, "the instance gone", func(s string) bool { return strings.Contains(s, "is gone") })
	if _, err := rig.dyn.Resource(gvr).Namespace(rig.ns).Get(ctx, "held", metav1.GetOptions{}); err == nil {
		t.Fatal("the screen says gone while the API server still has the instance")
	}
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape})
	screenUntil(t, tm, "the row out of the table", func(s string) bool {
		return strings.Contains(s, "NAMESPACE/NAME") && !strings.Contains(s, "/held")
	})
}
