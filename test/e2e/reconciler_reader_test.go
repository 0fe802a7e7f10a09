package e2e

import (
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kroscope/kroscope/reconciler"
)

// laggingReader plays a watch that is behind: it serves one old copy of
// the instance until told, through Stale, that it is out of date.
type laggingReader struct {
	mu    sync.Mutex
	old   *unstructured.Unstructured
	stale int
}

func (l *laggingReader) Instance(schema.GroupVersionResource, string, string) (*unstructured.Unstructured, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stale > 0 {
		return nil, false
	}
	return l.old.DeepCopy(), true
}

func (l *laggingReader) Child(schema.GroupVersionResource, string, string) (*unstructured.Unstructured, bool) {
	return nil, false
}
func (l *laggingReader) Unseen(schema.GroupVersionResource, string, string) bool      { return false }
func (l *laggingReader) Read(schema.GroupVersionResource, *unstructured.Unstructured) {}
func (l *laggingReader) Wrote(schema.GroupVersionResource, *unstructured.Unstructured, string) {
}
func (l *laggingReader) Forget(schema.GroupVersionResource, string, string) {}
func (l *laggingReader) Stale(schema.GroupVersionResource, string, string) {
	l.mu.Lock()
	l.stale++
	l.mu.Unlock()
}

// A reconcile served an out-of-date instance finds out through the
// conflict its status write gets, tells the Reader, and the next pass
// reads the instance from the API server: a lagging watch costs one
// refused write, never a wrong result.
func TestReconcilerTellsTheReaderAboutConflicts(t *testing.T) {
	r := newRig(t, chainGraph("RtLag"))
	r.create(chainInstance("RtLag", "app"))
	r.untilState("app", reconciler.InstanceStateActive)

	old := r.instance("app")
	delete(old.Object, "status") // as the watch saw it before kroscope's status write
	lag := &laggingReader{old: old}
	r.c.SetOptions(reconciler.Options{Reader: lag})
	r.patchSpec("app", map[string]any{"value": "two"})

	r.until("app", time.Minute, "the new value applied", func(o reconciler.Observation, _ error) bool {
		return o.State.State == reconciler.InstanceStateActive && o.Generation == 2
	})
	lag.mu.Lock()
	stale := lag.stale
	lag.mu.Unlock()
	if stale == 0 {
		t.Fatal("the status write's conflict was not reported to the Reader")
	}
	if got := cmData(t, r, "app-first", "value"); got != "two" {
		t.Fatalf("app-first value %q, want two", got)
	}
}
