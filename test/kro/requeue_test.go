package kro

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/test/engrun"
	"github.com/kroscope/kroscope/test/graphs"
)

// TestKroIgnoresRequeueAnnotation pins what kroscope's requeue does where
// kro's real controller (v0.9.4) reconciles: kroscope, observing beside an
// active kro, requeues by writing the kroscope.dev/requeue annotation (its
// one write) and says in the requeue note that kro ignores it. The finding
// is measured with kro's own reconcile counter
// (dynamic_controller_reconcile_total): after the metadata-only touch kro
// neither reconciles nor writes the instance (resourceVersion, generation
// and status unchanged); a spec change, as a control, makes the counter move.
func TestKroIgnoresRequeueAnnotation(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	// Log level 2 makes kro log each update it skips for an unchanged
	// generation.
	r := newKroRig(t, "--metrics-bind-address="+addr, "--zap-log-level=2")
	rgd := r.storeGraphYAML(graphs.Chain("krorequeue", "KroRequeue"))
	live := r.waitGraphs([]string{rgd.GetName()}, nil)[rgd.GetName()]
	crd := r.instanceCRD(live)
	gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: crd.Spec.Versions[0].Name, Resource: crd.Spec.Names.Plural}
	res := gvr.Resource + "." + gvr.Group
	r.createInstance(gvr, "KroRequeue", "touched")
	r.waitKroActive(gvr, "touched")

	eng := r.startEngine(func(o *engine.Options) {
		o.WatchClusterRGDs = true
		o.DisableLease = false
		o.CampaignIfFree = true
		o.Attach = true // as `kroscope` runs by default
		o.LeaseNamespace = r.ns
		o.Identity = "kroscope-requeue"
	})
	key := state.InstanceKey{Resource: res, Namespace: r.ns, Name: "touched"}
	eng.Until(time.Minute, "kroscope observing kro's instance, attached", func(s *state.Snapshot) (bool, string) {
		return s.Mode.Kro != "" && s.Mode.Attached && s.Instance(key) != nil, engrun.Describe(s)
	})

	metrics := "http://" + addr + "/metrics"
	before := settledKroReconciles(t, metrics, gvr.Resource)
	prior := r.get(gvr, r.ns, "touched")
	skipped := kroSkips(r, "touched")
	if err := eng.E.Requeue(key); err != nil {
		t.Fatalf("requeue beside kro: %v", err)
	}
	if note := eng.E.Snapshot().Mode.RequeueNote; note != engine.KroRequeueNote {
		t.Errorf("requeue note beside kro = %q, want %q", note, engine.KroRequeueNote)
	}
	touched := r.get(gvr, r.ns, "touched")
	if touched.GetAnnotations()[engine.RequeueAnnotation] == "" || touched.GetGeneration() != prior.GetGeneration() {
		t.Fatalf("after the requeue: annotations %v, generation %d -> %d; want the annotation and the same generation",
			touched.GetAnnotations(), prior.GetGeneration(), touched.GetGeneration())
	}
	if n := eng.Writes(); n != 1 {
		t.Errorf("kroscope sent %d writes beside kro, want only the requeue patch: %v", n, eng.FirstWrites())
	}

	// kro reacts to its watch within milliseconds; ten seconds is plenty.
	time.Sleep(10 * time.Second)
	after := kroReconciles(t, metrics, gvr.Resource)
	now := r.get(gvr, r.ns, "touched")
	t.Logf("kro's reconciles of %s: %d before the touch, %d ten seconds after; resourceVersion %s after the touch, %s now",
		gvr.Resource, before, after, touched.GetResourceVersion(), now.GetResourceVersion())
	if after != before {
		t.Errorf("kro reconciled %d times after the metadata-only touch: kroscope's requeue note says it ignores it", after-before)
	}
	if n := kroSkips(r, "touched"); n <= skipped {
		t.Errorf("kro did not log skipping the touched instance's update (%d skips before, %d after)", skipped, n)
	}
	if now.GetResourceVersion() != touched.GetResourceVersion() || !reflect.DeepEqual(now.Object["status"], touched.Object["status"]) {
		t.Errorf("kro wrote the instance after the touch: status %v -> %v", touched.Object["status"], now.Object["status"])
	}

	// Control: a spec change (a new generation) makes kro reconcile, so the
	// counter above would have seen one.
	if _, err := r.dyn.Resource(gvr).Namespace(r.ns).Patch(ctxT(t), "touched", types.MergePatchType,
		[]byte(`{"spec":{"value":"two"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	r.poll(time.Minute, "kro to reconcile the spec change", func() (bool, string) {
		n := kroReconciles(t, metrics, gvr.Resource)
		return n > after, "reconciles " + strconv.FormatInt(n, 10)
	})
}

// kroSkips counts kro's log lines that skip an update of the named
// instance because its generation did not change.
func kroSkips(r *kroRig, name string) int {
	n := 0
	for _, l := range r.kro.Logs() {
		if strings.Contains(l, "Skipping update due to unchanged generation") && strings.Contains(l, `"name":"`+name+`"`) {
			n++
		}
	}
	return n
}

// kroReconciles sums kro's dynamic_controller_reconcile_total for the
// instance resource (its gvr label names it).
func kroReconciles(t *testing.T, url, resource string) int64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("reading kro's metrics: %v", err)
	}
	defer resp.Body.Close()
	var n int64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "dynamic_controller_reconcile_total{") || !strings.Contains(line, resource) {
			continue
		}
		f := strings.Fields(line)
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
			n += int64(v)
		}
	}
	return n
}

// settledKroReconciles waits until kro's count stops moving for 5s: after
// a reconcile that changed something kro v0.9.4 reconciles once more 3s
// later ("cluster mutated", its default requeue delay).
func settledKroReconciles(t *testing.T, url, resource string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	last := kroReconciles(t, url, resource)
	for {
		select {
		case <-ctx.Done():
			t.Fatalf("kro keeps reconciling %s (count %d)", resource, last)
		case <-time.After(5 * time.Second):
		}
		n := kroReconciles(t, url, resource)
		if n == last && n > 0 {
			return n
		}
		last = n
	}
}
