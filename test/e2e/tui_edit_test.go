package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/tui"
)

// The engine serves what the terminal UI's Instance tab and E ask for.
var (
	_ tui.InstanceReader = (*engine.Engine)(nil)
	_ tui.InstanceEditor = (*engine.Engine)(nil)
)

// TestTUIEditThroughTheAPIServer edits an instance's spec with E and an
// $EDITOR script: the first save is invalid for the instance CRD's schema,
// so the editor opens again with the API server's error on top; the second
// is applied, as kroscope's field manager, and reconciled.
func TestTUIEditThroughTheAPIServer(t *testing.T) {
	rig := newEngRig(t)
	run, gvr := rig.serveChain("tui-edit", "TuiEdit")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rig.createInstance(gvr, "TuiEdit", "edited", map[string]any{"value": "before"})

	dir := t.TempDir()
	script := filepath.Join(dir, "editor.sh")
	body := "#!/bin/sh\nset -e\nif [ ! -f " + dir + "/once ]; then touch " + dir + "/once; sed -i 's/value: before/value: [1, 2]/' \"$1\"; " +
		"else cp \"$1\" " + dir + "/second.yaml; sed -i 's/value: \\[1, 2\\]/value: after/' \"$1\"; fi\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBE_EDITOR", "")
	t.Setenv("EDITOR", script)

	m := tui.NewModel(run.e, tui.Options{ConfigPath: "-", Theme: "dark", ASCII: true, NoColor: true})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(160, 40),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	t.Cleanup(func() { _ = tm.Quit() })
	screenUntil(t, tm, "the instance ACTIVE", func(s string) bool { return strings.Contains(s, "/edited") && strings.Contains(s, "ACTIVE") })
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	tm.Send(tea.KeyPressMsg{Code: 'E', Text: "E"})
	screenUntil(t, tm, "the edit applied", func(s string) bool { return strings.Contains(s, "applied the edit of") })

	second, err := os.ReadFile(filepath.Join(dir, "second.yaml"))
	if err != nil {
		t.Fatalf("the editor was not opened again: %v", err)
	}
	if !strings.Contains(string(second), "# error: ") || !strings.Contains(string(second), "spec.value") {
		t.Fatalf("the second editor file does not carry the API server's error:\n%s", second)
	}
	u, err := rig.dyn.Resource(gvr).Namespace(rig.ns).Get(ctx, "edited", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(u.Object, "spec", "value"); v != "after" {
		t.Fatalf("spec.value = %q, want after", v)
	}
	byKroscope := false
	for _, mf := range u.GetManagedFields() {
		// The user's edit is written under the user's own field manager
		// (#36): kro's evidence and kroscope's own fields stay apart.
		if mf.Manager == engine.UserFieldManager && mf.Operation == metav1.ManagedFieldsOperationUpdate && strings.Contains(string(mf.FieldsV1.Raw), "f:value") {
			byKroscope = true
		}
	}
	if !byKroscope {
		t.Fatalf("spec.value is not the user's edit (%s): %+v", engine.UserFieldManager, u.GetManagedFields())
	}
	// The child follows the new spec.
	cms := rig.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(rig.ns)
	deadline := time.Now().Add(time.Minute)
	for {
		cm, err := cms.Get(ctx, "edited-a", metav1.GetOptions{})
		if err == nil {
			if v, _, _ := unstructured.NestedString(cm.Object, "data", "value"); v == "after" {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("child a does not follow the edited spec (last err %v)", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
