package e2e

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/test/graphs"
)

// stuckRGD writes one ConfigMap named after the instance; stuckCELRGD's
// readyWhen is a 10^9-step comprehension.
func stuckRGD(suffix, readyWhen string) string {
	return graphs.RGD("engstuck"+suffix, "EngStuck"+suffix, "", graphs.ConfigMap("cm", "${schema.metadata.name}", "", readyWhen))
}

// hangingWrites never answers a write to the ConfigMap "stuck": with
// honourCtx it returns when the request's context is cancelled, without
// it not even then (a call that ignores its context), until release.
type hangingWrites struct {
	next      http.RoundTripper
	off       bool
	honourCtx bool
	release   chan struct{}
	entered   chan struct{}
	once      sync.Once
}

func (h *hangingWrites) RoundTrip(req *http.Request) (*http.Response, error) {
	if !h.off && req.Method != http.MethodGet && strings.HasSuffix(req.URL.Path, "/configmaps/stuck") {
		h.once.Do(func() { close(h.entered) })
		if h.honourCtx {
			select {
			case <-req.Context().Done():
				return nil, req.Context().Err()
			case <-h.release:
			}
		} else {
			<-h.release
		}
	}
	return h.next.RoundTrip(req)
}

// TestShutdownIsBoundedWhateverWorkersDo: once Run's context is done, Run
// returns within the shutdown grace although a worker is stuck in an API
// call that never answers (honouring its context, or not even that) or in
// a CEL evaluation, and the log names the instance still in flight.
func TestShutdownIsBoundedWhateverWorkersDo(t *testing.T) {
	r := newEngRig(t)
	const grace = 3 * time.Second
	cases := []struct {
		name, suffix, readyWhen string
		honourCtx               bool
		limits                  graph.Limits
		// quick: the worker's context is cancelled first, so it ends well
		// within the grace.
		quick bool
	}{
		{name: "api call honouring its context", suffix: "a", honourCtx: true, quick: true},
		{name: "api call ignoring its context", suffix: "b"},
		{name: "cel evaluation", suffix: "c", readyWhen: "readyWhen:\n- ${lists.range(1000000).map(i, lists.range(1000).map(j, i*j)).size() > 0}",
			limits: graph.Limits{Cost: math.MaxUint64, Timeout: 20 * time.Second}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file := r.writeFile("stuck-"+c.suffix+".yaml", stuckRGD(c.suffix, c.readyWhen))
			hang := &hangingWrites{off: c.readyWhen != "", honourCtx: c.honourCtx, release: make(chan struct{}), entered: make(chan struct{})}
			t.Cleanup(func() { close(hang.release) })
			run := r.start(func(o *engine.Options) {
				cfg := rest.CopyConfig(r.cfg)
				cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { hang.next = rt; return hang })
				set, err := client.NewSet(cfg)
				if err != nil {
					t.Fatal(err)
				}
				o.ClientSet = set
				o.RGDPaths = []string{file}
				o.ShutdownGrace = grace
				o.CELLimits = c.limits
			})
			gvr := run.graphServed("engstuck" + c.suffix)
			r.createInstance(gvr, "EngStuck"+c.suffix, "stuck", nil)
			if c.readyWhen == "" {
				select {
				case <-hang.entered:
				case <-time.After(time.Minute):
					t.Fatal("the write never reached the hanging server")
				}
			} else {
				run.waitFor(time.Minute, "the ConfigMap written", func(*state.Snapshot) bool {
					_, err := r.env.Kubernetes().CoreV1().ConfigMaps(r.ns).Get(context.Background(), "stuck", metav1.GetOptions{})
					return err == nil
				})
				time.Sleep(200 * time.Millisecond) // the worker is in readyWhen now
			}
			start := time.Now()
			run.Cancel()
			if stopped, _ := run.Wait(grace + 5*time.Second); !stopped {
				t.Fatalf("Run still running %v after its context was cancelled (grace %v)", time.Since(start), grace)
			}
			took := time.Since(start)
			if took > grace+time.Second {
				t.Errorf("shutdown took %v, grace is %v", took, grace)
			}
			if c.quick && took > grace/2 {
				t.Errorf("shutdown took %v: the worker's context was not cancelled first", took)
			}
			var logged bool
			for _, l := range run.e.Snapshot().Logs {
				if strings.Contains(l.Message, "shutting down") && strings.Contains(fmt.Sprint(l.KV), r.ns+"/stuck") {
					logged = true
				}
			}
			if !logged {
				t.Errorf("the shutdown log does not name the in-flight instance %s/stuck", r.ns)
			}
		})
	}
}
