package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/kroscope/kroscope/engine/state"
)

// In --observe an edit is refused before anything is read or written.
func TestEditRefusedWhileObserving(t *testing.T) {
	e, err := New(Options{ClientSet: fakeSet(), Observe: true})
	if err != nil {
		t.Fatal(err)
	}
	key := state.InstanceKey{Resource: "webapps.kro.run", Namespace: "demo", Name: "x"}
	if _, err := e.EditableInstance(context.Background(), key); err == nil || !strings.Contains(err.Error(), "--observe") {
		t.Fatalf("EditableInstance: %v", err)
	}
	if err := e.ApplyInstanceEdit(context.Background(), key, []byte("spec: {}")); err == nil || !strings.Contains(err.Error(), "--observe") {
		t.Fatalf("ApplyInstanceEdit: %v", err)
	}
}
