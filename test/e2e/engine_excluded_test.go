package e2e

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/test/graphs"
)

// excludedUnservedRGD holds a resource of a kind no CRD serves, excluded
// by includeWhen.
var excludedUnservedRGD = graphs.RGD("engexcl", "EngExcl", "spec:\n  widget: boolean | default=false",
	graphs.ConfigMap("cm", "${schema.metadata.name}", ""),
	graphs.Template("widget", "example.com/v1", "Widget", "name: ${schema.metadata.name}", "", "includeWhen:\n- ${schema.spec.widget}"))

// discoveryCounter counts discovery requests (/api, /apis and their
// group/version documents).
type discoveryCounter struct {
	next http.RoundTripper
	n    *atomic.Int64
}

func (d *discoveryCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	p := req.URL.Path
	if req.Method == http.MethodGet && (p == "/api" || p == "/apis" || strings.HasPrefix(p, "/apis/") && strings.Count(p, "/") <= 3 ||
		p == "/api/v1") {
		d.n.Add(1)
	}
	return d.next.RoundTrip(req)
}

// TestExcludedResourceOfUnservedKind: a resource excluded by includeWhen
// whose kind the API server does not serve leaves the instance ACTIVE,
// and reconciling it again asks the API server nothing about that kind
// (no discovery refresh per pass).
func TestExcludedResourceOfUnservedKind(t *testing.T) {
	r := newEngRig(t)
	file := r.writeFile("excl.yaml", excludedUnservedRGD)
	var discovery atomic.Int64
	run := r.start(func(o *engine.Options) {
		cfg := rest.CopyConfig(r.cfg)
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &discoveryCounter{next: rt, n: &discovery} })
		set, err := client.NewSet(cfg)
		if err != nil {
			t.Fatal(err)
		}
		o.ClientSet = set
		o.RGDPaths = []string{file}
		o.RequeueInterval = 500 * time.Millisecond
		o.ReconcileConfig.DefaultRequeueDuration = 500 * time.Millisecond
	})
	gvr := run.graphServed("engexcl")
	r.createInstance(gvr, "EngExcl", "one", nil)
	run.allInState(gvr.GroupResource().String(), 1, reconciler.InstanceStateActive, time.Minute)
	key := state.InstanceKey{Resource: gvr.GroupResource().String(), Namespace: r.ns, Name: "one"}
	count := func(s *state.Snapshot) int64 {
		for _, in := range s.Instances {
			if in.Key == key {
				return in.Reconciles
			}
		}
		return 0
	}
	before := discovery.Load()
	reconciles := count(run.e.Snapshot())
	// Every pass re-evaluates includeWhen: let a few go by.
	for i := 0; i < 3; i++ {
		if err := run.e.Requeue(key); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
	}
	s := run.allInState(key.Resource, 1, reconciler.InstanceStateActive, time.Minute)
	if got := count(s); got <= reconciles {
		t.Fatalf("no reconcile after ACTIVE (%d then %d): the check is empty", reconciles, got)
	}
	if d := discovery.Load() - before; d != 0 {
		t.Errorf("%d discovery requests while the instance was reconciled again", d)
	}
}
