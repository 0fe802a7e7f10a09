package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/kroscope/kroscope/engine/state"
)

// In --observe an edit is refused before anything is read or written.
func TestEditRefusedWhileObserving(t *testing.T) {
	o := Options{Observe: true}
	e := &Engine{wr: newWriter(o, false), o: o, store: state.NewStore()}
	key := state.InstanceKey{Resource: "webapps.kro.run", Namespace: "demo", Name: "x"}
	if _, err := e.EditableInstance(context.Background(), key); err == nil || !strings.Contains(err.Error(), "--observe") {
		t.Fatalf("EditableInstance: %v", err)
	}
	if err := e.ApplyInstanceEdit(context.Background(), key, []byte("spec: {}")); err == nil || !strings.Contains(err.Error(), "--observe") {
		t.Fatalf("ApplyInstanceEdit: %v", err)
	}
}
