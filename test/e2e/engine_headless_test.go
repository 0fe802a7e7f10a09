package e2e

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/headless"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/test/engrun"
	"github.com/kroscope/kroscope/test/graphs"
)

// failingRGD divides by a spec field that defaults to zero: a CEL runtime
// error, so the instance ends FAILED.
var failingRGD = graphs.RGD("enghlfail", "EngHlFail", "spec:\n  zero: integer | default=0",
	graphs.ConfigMap("cm", "${schema.metadata.name}", "ratio: ${string(10 / schema.spec.zero)}"))

// headless runs RunHeadless on a fresh engine for the rig (engine
// defaults: no requeue interval of the rig's) and returns its output and
// error, waiting up to three minutes for it to end on its own.
func (r *engRig) headless(t *testing.T, rgd string, h headless.Options, during func(*engine.Engine)) (string, error) {
	t.Helper()
	var out bytes.Buffer
	run := engrun.Start(t, engrun.Config{
		Rest: r.cfg, Namespace: r.ns, LogLines: 40, LogPrefix: "engine log: ",
		Run: func(ctx context.Context, e *engine.Engine) error { return headless.Run(ctx, e, &out, h) },
	}, func(o *engine.Options) { o.RGDPaths = []string{rgd} })
	if during != nil {
		during(run.E)
	}
	stopped, err := run.Wait(3 * time.Minute)
	if !stopped {
		err = run.Stop()
	}
	return out.String(), err
}

// waitGraph waits until the engine serves a graph and returns its state.
func waitGraph(t *testing.T, e *engine.Engine, name string) state.Graph {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		for _, g := range e.Snapshot().Graphs {
			if g.Name == name && g.Served {
				return g
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("graph %s not served", name)
	return state.Graph{}
}

func exitCode(err error) int {
	var ee *headless.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// `kroscope run --exit-when active` exits 0 once every instance is ACTIVE,
// 1 when one ends FAILED (naming it), and 2 on timeout.
func TestEngineHeadlessExitCodes(t *testing.T) {
	r := newEngRig(t)
	good := r.writeFile("good.yaml", graphs.Chain("enghlgood", "EngHlGood"))
	var goodGVR schema.GroupVersionResource
	out, err := r.headless(t, good, headless.Options{ExitWhen: "active", Timeout: 2 * time.Minute}, func(e *engine.Engine) {
		g := waitGraph(t, e, "enghlgood")
		gvr := gvrOfGraph(t, g)
		goodGVR = gvr
		r.createInstance(gvr, "EngHlGood", "one", nil)
		r.createInstance(gvr, "EngHlGood", "two", nil)
	})
	t.Logf("active run:\n%s", out)
	if exitCode(err) != 0 {
		t.Fatalf("exit-when active: %v", err)
	}
	if strings.Count(out, "-> ACTIVE") != 2 {
		t.Errorf("want two ACTIVE transitions in the output")
	}

	bad := r.writeFile("bad.yaml", failingRGD)
	out, err = r.headless(t, bad, headless.Options{ExitWhen: "active", Timeout: 2 * time.Minute}, func(e *engine.Engine) {
		g := waitGraph(t, e, "enghlfail")
		r.createInstance(gvrOfGraph(t, g), "EngHlFail", "bad", nil)
	})
	t.Logf("failing run: %v\n%s", err, out)
	if exitCode(err) != 1 || !strings.Contains(err.Error(), "bad is FAILED") {
		t.Fatalf("exit-when active with a FAILED instance: exit %d, err %v", exitCode(err), err)
	}

	// Idle: exit 0 when everything is converged, 1 when an instance FAILED.
	_, err = r.headless(t, good, headless.Options{ExitWhen: "idle", Timeout: 2 * time.Minute}, nil)
	if exitCode(err) != 0 {
		t.Fatalf("exit-when idle with converged instances: %v", err)
	}
	out, err = r.headless(t, bad, headless.Options{ExitWhen: "idle", Timeout: 2 * time.Minute}, nil)
	if exitCode(err) != 1 || !strings.Contains(err.Error(), "bad is FAILED") {
		t.Fatalf("exit-when idle with a FAILED instance: exit %d (%v)\n%s", exitCode(err), err, out)
	}
	// An instance that waits forever (its first ConfigMap is held by
	// another instance's name) makes exit-when active time out: exit 2.
	// (The CRD exists from the first run, so the instance exists before
	// the engine starts.)
	r.applyYAML(gvrConfigMap, r.ns, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: three-a\n")
	r.createInstance(goodGVR, "EngHlGood", "three", nil)
	_, err = r.headless(t, good, headless.Options{ExitWhen: "active", Timeout: 5 * time.Second}, nil)
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("exit-when active that cannot happen: exit %d (%v)", exitCode(err), err)
	}
}

// The metrics endpoint serves reconcile, queue and watch metrics.
func TestEngineMetrics(t *testing.T) {
	r := newEngRig(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	run, gvr := r.serveFile("engmetrics", graphs.Chain("engmetrics", "EngMetrics"), func(o *engine.Options) { o.MetricsBindAddress = addr })
	r.createInstance(gvr, "EngMetrics", "m", nil)
	run.allInState(gvr.Resource+"."+gvr.Group, 1, reconciler.InstanceStateActive, time.Minute)
	res := gvr.Resource + "." + gvr.Group
	want := []string{
		`kroscope_reconcile_total{resource="` + res + `",result="success"}`,
		`kroscope_reconcile_duration_seconds_bucket{resource="` + res + `"`,
		`workqueue_adds_total{controller="kroscope",name="kroscope"`,
		`kroscope_watch_events_total{type="add",watch="configmaps (children)"}`,
		`kroscope_graphs_served`,
	}
	// The state store shows ACTIVE while the reconcile that got there is
	// still returning; its metrics are counted when it has: scrape until
	// they show (a generous bound: the machine may be busy).
	var missing []string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		missing = missing[:0]
		for _, w := range want {
			if !strings.Contains(string(body), w) {
				missing = append(missing, w)
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, w := range missing {
		t.Errorf("metrics lack %s", w)
	}
}

func gvrOfGraph(t *testing.T, g state.Graph) (out schema.GroupVersionResource) {
	plural, group, _ := strings.Cut(g.Resource, ".")
	return schema.GroupVersionResource{Group: group, Version: "v1alpha1", Resource: plural}
}
