package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/test/graphs"
)

// Two graphs that create instances of each other: build time cannot see
// the loop (neither creates its own kind).
var recursionA = graphs.RGD("reca", "RecA", "spec: {}",
	graphs.Template("b", "kro.run/v1alpha1", "RecB", "name: ${schema.metadata.name}-b", ""))

var recursionB = graphs.RGD("recb", "RecB", "spec: {}",
	graphs.Template("a", "kro.run/v1alpha1", "RecA", "name: ${schema.metadata.name}-a", ""))

// TestGraphsThatCreateEachOther: with a nesting limit of 3, the instance
// with 4 instances above it is FAILED with a message naming the chain, and
// no deeper instance is created.
func TestGraphsThatCreateEachOther(t *testing.T) {
	r := newEngRig(t)
	r.writeFile("a.yaml", recursionA)
	r.writeFile("b.yaml", recursionB)
	run := r.start(func(o *engine.Options) {
		o.RGDPaths = []string{r.dir}
		o.ReconcileConfig.MaxNestingDepth = 3
	})
	a := run.graphServed("reca")
	b := run.graphServed("recb")
	r.createInstance(a, "RecA", "x", nil)

	deepest := state.InstanceKey{Resource: a.GroupResource().String(), Namespace: r.ns, Name: "x-b-a-b-a"}
	var msg string
	run.waitFor(2*time.Minute, "x-b-a-b-a FAILED", func(s *state.Snapshot) bool {
		for _, in := range s.Instances {
			if in.Key == deepest && in.State == reconciler.InstanceStateFailed {
				msg = in.Message
				return true
			}
		}
		return false
	})
	t.Logf("%s", msg)
	for _, want := range []string{"more than 3 instances deep", "--max-nesting-depth", "RecA " + r.ns + "/x-b-a-b-a <- RecB " + r.ns + "/x-b-a-b <- RecA " + r.ns + "/x-b-a <- RecB " + r.ns + "/x-b <- RecA " + r.ns + "/x"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	// Give a runaway recursion time to show itself.
	time.Sleep(3 * time.Second)
	for _, c := range []struct {
		res  string
		want int
	}{{"a", 3}, {"b", 2}} {
		gvr := a
		if c.res == "b" {
			gvr = b
		}
		l, err := r.dyn.Resource(gvr).Namespace(r.ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Items) != c.want {
			var names []string
			for _, it := range l.Items {
				names = append(names, it.GetName())
			}
			t.Errorf("%d %s instances %v, want %d", len(l.Items), gvr.Resource, names, c.want)
		}
	}
	s := run.e.Snapshot()
	for _, in := range s.Instances {
		if in.Key != deepest && in.State == reconciler.InstanceStateFailed {
			t.Errorf("%s FAILED too: %s", in.Key.Name, in.Message)
		}
	}
}
