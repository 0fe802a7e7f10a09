package e2e

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/test/graphs"
)

// getLog records the single-object GETs (not lists, not watches) sent.
type getLog struct {
	next http.RoundTripper
	mu   sync.Mutex
	gets []string
}

func (g *getLog) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet && req.URL.Query().Get("watch") == "" {
		g.mu.Lock()
		g.gets = append(g.gets, req.URL.Path)
		g.mu.Unlock()
	}
	return g.next.RoundTrip(req)
}

// objectGets returns the GETs whose path names one of names.
func (g *getLog) objectGets(names ...string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for _, p := range g.gets {
		for _, n := range names {
			if strings.HasSuffix(p, "/"+n) || strings.HasSuffix(p, "/"+n+"/status") {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// The engine answers a reconcile's reads from its watches: a converged
// instance is reconciled without reading anything from the API server,
// and a child changed by hand is seen as changed (its watch moved past the
// version kroscope remembers) and corrected.
func TestEngineReadsFromWatches(t *testing.T) {
	r := newEngRig(t)
	log := &getLog{}
	cfg := rest.CopyConfig(r.cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { log.next = rt; return log })
	r.cfg = cfg
	run, gvr := r.serveFile("engreads", graphs.Chain("engreads", "EngReads"), watchesOnly)
	r.createInstance(gvr, "EngReads", "rd", map[string]any{"value": "v1"})
	key := state.InstanceKey{Resource: gvr.Resource + "." + gvr.Group, Namespace: r.ns, Name: "rd"}
	active := func(s *state.Snapshot) bool {
		in := s.Instance(key)
		return in != nil && in.State == reconciler.InstanceStateActive
	}
	run.waitFor(time.Minute, "rd ACTIVE", active)
	names := []string{"rd", "rd-a", "rd-a-b", "rd-a-b-c"}
	// Creating it read nothing: whether each child's name was free (an
	// object without kroscope's labels is invisible to its watches) is
	// proved by the apply that creates the child (client.Objects.Create).
	if got := log.objectGets(names...); len(got) != 0 {
		t.Errorf("creating the instance sent %d object GETs, want 0:\n%s", len(got), strings.Join(got, "\n"))
	}

	before := len(log.objectGets(names...))
	count := run.e.Snapshot().Instance(key).Reconciles
	if err := run.e.Requeue(key); err != nil {
		t.Fatal(err)
	}
	run.waitFor(time.Minute, "the requeued reconcile", func(s *state.Snapshot) bool {
		in := s.Instance(key)
		return in != nil && in.Reconciles > count && in.State == reconciler.InstanceStateActive
	})
	if got := log.objectGets(names...); len(got) != before {
		t.Errorf("a converged reconcile read from the API server:\n%s", strings.Join(got[before:], "\n"))
	}

	// A hand edit moves the child past the version kroscope remembers: it
	// must be read again and corrected, never served from memory.
	ctx := context.Background()
	cms := r.dyn.Resource(gvrConfigMap).Namespace(r.ns)
	b, err := cms.Get(ctx, "rd-a-b", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(b.Object, "edited by hand", "data", "from"); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Update(ctx, b, metav1.UpdateOptions{FieldManager: "someone"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		b, err := cms.Get(ctx, "rd-a-b", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if v, _, _ := unstructured.NestedString(b.Object, "data", "from"); v == "rd-a" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the hand edit was not corrected within a minute: data %v", b.Object["data"])
		}
		time.Sleep(100 * time.Millisecond)
	}
	run.waitFor(time.Minute, "rd ACTIVE after the correction", active)
}
