package tui

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kroscope/kroscope/engine/state"
)

// editBackend is the fake with the engine's edit calls; validate plays the
// API server's validation.
type editBackend struct {
	*fakeBackend
	emu      sync.Mutex
	applied  []string
	validate func(doc string) error
}

func (e *editBackend) EditableInstance(_ context.Context, key state.InstanceKey) ([]byte, error) {
	return []byte("apiVersion: kro.run/v1alpha1\nkind: WebApp\nmetadata:\n  name: " + key.Name + "\n  namespace: " + key.Namespace +
		"\n  resourceVersion: \"41\"\nspec:\n  image: nginx:1.27\n  replicas: 2\n"), nil
}

func (e *editBackend) ApplyInstanceEdit(_ context.Context, _ state.InstanceKey, doc []byte) error {
	if e.validate != nil {
		if err := e.validate(string(doc)); err != nil {
			return err
		}
	}
	e.emu.Lock()
	defer e.emu.Unlock()
	e.applied = append(e.applied, string(doc))
	return nil
}

func (e *editBackend) edits() []string {
	e.emu.Lock()
	defer e.emu.Unlock()
	return append([]string(nil), e.applied...)
}

// editorScript writes an $EDITOR that runs body with the file as $1 and
// a call counter in $N (1, 2, ...), and sets EDITOR to it.
func editorScript(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "editor.sh")
	script := "#!/bin/sh\nset -e\nn=$(cat " + dir + "/count 2>/dev/null || echo 0)\nN=$((n+1))\necho $N > " + dir + "/count\n" + body + "\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBE_EDITOR", "")
	t.Setenv("EDITOR", path)
	return dir
}

// "there is no way ... to edit a FAILED instance's spec": E opens the spec
// in $EDITOR and the saved edit is applied.
func TestNewUserEditAppliesTheSpec(t *testing.T) {
	editorScript(t, `sed -i 's/replicas: 2/replicas: 5/' "$1"`)
	b := &editBackend{fakeBackend: newFake(only(fixture(), "api"))}
	tm := newTeatest(t, b, Options{ConfigPath: "-", Theme: "dark"}, 160, 40)
	send(tm, "enter", "E")
	eventually(t, "the edit applied", func() bool { return len(b.edits()) == 1 })
	if got := b.edits()[0]; !strings.Contains(got, "replicas: 5") || strings.Contains(got, "# Editing") {
		t.Fatalf("applied %q", got)
	}
	eventually(t, "the flash", func() bool { return strings.Contains(tmFrame(t, tm), "applied the edit of team-b/api") })
	finalFrame(t, tm)
}

// An edit the API server refuses opens the editor again with the error on
// top (as kubectl edit does); the next save is applied.
func TestNewUserEditShowsValidationErrorInTheEditor(t *testing.T) {
	dir := editorScript(t, `if [ $N = 1 ]; then sed -i 's/replicas: 2/replicas: lots/' "$1"; else cp "$1" "$(dirname "$0")/second.yaml"; sed -i 's/replicas: lots/replicas: 3/' "$1"; fi`)
	b := &editBackend{fakeBackend: newFake(only(fixture(), "api")), validate: func(doc string) error {
		if strings.Contains(doc, "lots") {
			return errors.New(`WebApp.kro.run "api" is invalid: spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`)
		}
		return nil
	}}
	tm := newTeatest(t, b, Options{ConfigPath: "-", Theme: "dark"}, 160, 40)
	send(tm, "enter", "E")
	eventually(t, "the corrected edit applied", func() bool { return len(b.edits()) == 1 })
	second, err := os.ReadFile(filepath.Join(dir, "second.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(second), "# error: WebApp.kro.run \"api\" is invalid: spec.replicas") || !strings.Contains(string(second), "replicas: lots") {
		t.Fatalf("the editor's second file does not show the error above the user's edit:\n%s", second)
	}
	if got := b.edits()[0]; !strings.Contains(got, "replicas: 3") {
		t.Fatalf("applied %q", got)
	}
	finalFrame(t, tm)
}

// Quitting the editor without a change cancels; in --observe E is refused.
func TestEditCancelledAndRefusedInObserve(t *testing.T) {
	editorScript(t, `true`)
	b := &editBackend{fakeBackend: newFake(only(fixture(), "api"))}
	tm := newTeatest(t, b, Options{ConfigPath: "-", Theme: "dark"}, 160, 40)
	send(tm, "enter", "E")
	eventually(t, "the cancel", func() bool { return strings.Contains(tmFrame(t, tm), "edit of team-b/api cancelled: no change") })
	finalFrame(t, tm)

	snap := only(fixture(), "api")
	snap.Mode = state.Mode{Forced: true}
	b = &editBackend{fakeBackend: newFake(snap)}
	tm = newTeatest(t, b, Options{ConfigPath: "-", Theme: "dark"}, 160, 40)
	send(tm, "enter", "E")
	eventually(t, "the refusal", func() bool {
		return strings.Contains(tmFrame(t, tm), "not editing team-b/api: kroscope runs read-only (--observe)")
	})
	if len(b.edits()) != 0 {
		t.Fatal("an edit was applied in --observe")
	}
	finalFrame(t, tm)
}
