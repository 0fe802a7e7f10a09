package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/test/engrun"
	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/graphs"
	"github.com/kroscope/kroscope/test/prereq"
)

// The acceptance: two `kroscope run` processes (the Deployment's
// two replicas) elect one holder; a TUI engine started beside them does not
// campaign but attaches. Its requeue is an annotation the holder acts on at
// once (the generation does not move); SIGKILLing the holder moves the
// Lease to the other replica and the attached engine shows the new holder;
// its delete is an API delete the holder carries out. Every request the
// attached engine sends is recorded: the only writes are the requeue
// patches and the delete.
func TestEngineAttachedTUIRequeueAndHandover(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the kroscope binary")
	}
	r := newEngRig(t)
	bin := buildKroscope(t)
	rgd := r.writeFile("rgd.yaml", graphs.Chain("engattach", "EngAttach"))
	const leaseName, leaseDuration = "kroscope-attach", 3 * time.Second
	kc := kubeconfig(t, r.cfg)
	replica := func(id string) *replicaProc {
		return startReplica(t, bin, id, "run", "--kubeconfig", kc, "-n", r.ns, "--rgd", rgd, "--cluster-rgds=false",
			"--lease-namespace", r.ns, "--lease-name", leaseName, "--lease-duration", leaseDuration.String(), "--identity", id)
	}
	// An engine in the test installs the CRD and names its resource.
	first := r.start(func(o *engine.Options) { o.RGDPaths = []string{rgd} })
	gvr := first.graphServed("engattach")
	if err := first.stop(); err != nil {
		t.Fatal(err)
	}
	a := replica("replica-a")
	r.waitLeaseHolder(leaseName, "replica-a", 2*time.Minute)
	b := replica("replica-b")
	r.createInstance(gvr, "EngAttach", "web", nil)
	r.waitInstanceState(gvr, "web", reconciler.InstanceStateActive, 2*time.Minute)

	// The TUI's engine, as `kroscope` runs it by default (--attach, no
	// --take-lease), with every request recorded.
	rec := &requestLog{}
	tui := &engRun{t: t}
	tui.Run = engrun.Start(t, engrun.Config{
		Rest:      r.cfg,
		Wrap:      func(rt http.RoundTripper) http.RoundTripper { return &recorder{next: rt, log: rec} },
		Namespace: r.ns,
		LogLines:  40,
		LogPrefix: "TUI engine log: ",
	}, func(o *engine.Options) {
		o.RGDPaths = []string{rgd}
		o.DisableLease = false
		o.LeaseNamespace, o.LeaseName, o.LeaseDuration, o.Identity = r.ns, leaseName, leaseDuration, "laptop-tui"
		o.CampaignIfFree, o.Attach = true, true
		o.ReconcileConfig = reconciler.ReconcileConfig{}
	})
	tui.e = tui.E

	res := gvr.Resource + "." + gvr.Group
	key := state.InstanceKey{Resource: res, Namespace: r.ns, Name: "web"}
	tui.waitFor(2*time.Minute, "the TUI attached to replica-a, showing web ACTIVE", func(s *state.Snapshot) bool {
		in := s.Instance(key)
		return s.Mode.Attached && !s.Mode.Reconciling && s.Mode.Holder == "replica-a" && in != nil && in.State == reconciler.InstanceStateActive
	})

	requeue := func(holder *replicaProc) time.Duration {
		t.Helper()
		gen := r.instance(gvr, "web").GetGeneration()
		before := holder.settledReconciles(t, res)
		start := time.Now()
		if err := tui.e.Requeue(key); err != nil {
			t.Fatalf("attached requeue: %v", err)
		}
		deadline := start.Add(30 * time.Second)
		for holder.reconciles(t, res) <= before {
			if time.Now().After(deadline) {
				t.Fatalf("%s did not reconcile web within 30s of the attached requeue", holder.id)
			}
			time.Sleep(10 * time.Millisecond)
		}
		took := time.Since(start)
		u := r.instance(gvr, "web")
		if u.GetGeneration() != gen {
			t.Errorf("the requeue moved the generation %d -> %d", gen, u.GetGeneration())
		}
		if u.GetAnnotations()[engine.RequeueAnnotation] == "" {
			t.Errorf("no %s annotation on the instance after the requeue", engine.RequeueAnnotation)
		}
		return took
	}
	took := requeue(a)
	t.Logf("attached requeue -> reconcile by replica-a: %s", took.Round(time.Millisecond))
	if s := tui.e.Snapshot(); !strings.Contains(s.Mode.RequeueNote, "replica-a") {
		t.Errorf("the requeue note does not name the holder: %q", s.Mode.RequeueNote)
	}

	// --attach=false: observe only; requeue and delete are refused, naming
	// the holder, and nothing is written.
	obs := r.start(func(o *engine.Options) {
		o.RGDPaths = []string{rgd}
		o.DisableLease, o.CampaignIfFree, o.Attach = false, true, false
		o.LeaseNamespace, o.LeaseName, o.LeaseDuration, o.Identity = r.ns, leaseName, leaseDuration, "laptop-observer"
	})
	obs.waitFor(2*time.Minute, "the --attach=false engine observing replica-a", func(s *state.Snapshot) bool {
		in := s.Instance(key)
		return !s.Mode.Attached && !s.Mode.Reconciling && s.Mode.Holder == "replica-a" && in != nil && in.State == reconciler.InstanceStateActive
	})
	if err := obs.e.Requeue(key); err == nil || !strings.Contains(err.Error(), "--attach=false") || !strings.Contains(err.Error(), "replica-a") {
		t.Errorf("requeue with --attach=false: err = %v, want a refusal naming --attach=false and the holder", err)
	}
	if err := obs.e.Delete(context.Background(), key); err == nil || !strings.Contains(err.Error(), "--attach=false") {
		t.Errorf("delete with --attach=false: err = %v, want a refusal", err)
	}
	if err := obs.stop(); err != nil {
		t.Fatal(err)
	}
	if n := obs.Writes(); n != 0 {
		t.Errorf("the --attach=false engine wrote %d times", n)
	}

	// The holder dies without releasing the Lease.
	killed := time.Now()
	a.kill(t)
	r.waitLeaseHolder(leaseName, "replica-b", 2*time.Minute)
	moved := time.Since(killed)
	tui.waitFor(time.Minute, "the TUI attached to replica-b", func(s *state.Snapshot) bool {
		return s.Mode.Attached && s.Mode.Holder == "replica-b"
	})
	shown := time.Since(killed)
	t.Logf("holder SIGKILLed: the Lease moved to replica-b after %s, the TUI showed it after %s (lease duration %s)",
		moved.Round(time.Millisecond), shown.Round(time.Millisecond), leaseDuration)

	took = requeue(b)
	t.Logf("attached requeue -> reconcile by replica-b: %s", took.Round(time.Millisecond))

	// Delete is the user's action: an API delete; the holder tears down.
	if err := tui.e.Delete(context.Background(), key); err != nil {
		t.Fatalf("attached delete: %v", err)
	}
	r.waitGone(gvr, "web", 2*time.Minute)

	patches, deletes, others := rec.writes(r.ns, gvr.Resource, "web")
	if patches != 2 || deletes != 1 || len(others) != 0 {
		t.Errorf("the attached engine wrote %d requeue patches and %d deletes (want 2 and 1), and %d other writes: %v", patches, deletes, len(others), others)
	}
	// The TUI never campaigned: it read the Lease once, then watched it.
	if n := rec.leaseReads(leaseName); n != 1 {
		t.Errorf("the attached engine read the Lease by name %d times, want once (a campaigning engine polls it)", n)
	}
	t.Logf("attached engine: %d requests, writes: %d requeue patches, %d delete, %d other", rec.count(), patches, deletes, len(others))
}

// buildKroscope returns the kroscope binary (built once per test binary).
func buildKroscope(t *testing.T) string { return prereq.Kroscope(t) }

// replicaProc is one `kroscope run` process serving metrics on a port of
// its own, which is how the test sees it reconcile.
type replicaProc struct {
	id      string
	cmd     *exec.Cmd
	metrics string
	stderr  *engrun.Buffer
	once    sync.Once
}

func startReplica(t *testing.T, bin, id string, args ...string) *replicaProc {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	p := &replicaProc{id: id, metrics: "http://" + addr + "/metrics", stderr: &engrun.Buffer{}}
	p.cmd = exec.Command(bin, append(args, "--metrics-bind-address", addr)...)
	p.cmd.Stdout, p.cmd.Stderr = io.Discard, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.kill(t)
		if t.Failed() {
			t.Logf("%s stderr:\n%s", id, p.stderr.String())
		}
	})
	return p
}

// kill SIGKILLs the process: it cannot release the Lease.
func (p *replicaProc) kill(t *testing.T) {
	p.once.Do(func() {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		_ = p.cmd.Wait()
	})
}

// reconciles sums kroscope_reconcile_total for resource.
func (p *replicaProc) reconciles(t *testing.T, resource string) int64 {
	t.Helper()
	resp, err := http.Get(p.metrics)
	if err != nil {
		return -1 // not serving yet
	}
	defer resp.Body.Close()
	var n int64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "kroscope_reconcile_total{") || !strings.Contains(line, `resource="`+resource+`"`) {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err == nil {
			n += int64(v)
		}
	}
	return n
}

// settledReconciles waits until the count stops moving for a second.
func (p *replicaProc) settledReconciles(t *testing.T, resource string) int64 {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	last := p.reconciles(t, resource)
	for {
		time.Sleep(time.Second)
		n := p.reconciles(t, resource)
		if n == last && n >= 0 {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s keeps reconciling %s (count %d)", p.id, resource, n)
		}
		last = n
	}
}

func (r *engRig) waitLeaseHolder(name, want string, timeout time.Duration) {
	r.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		l, err := r.env.Kubernetes().CoordinationV1().Leases(r.ns).Get(context.Background(), name, metav1.GetOptions{})
		if err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity == want {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%s never held the lease %s (last error %v)", want, name, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (r *engRig) instance(gvr schema.GroupVersionResource, name string) *unstructured.Unstructured {
	r.t.Helper()
	u, err := r.dyn.Resource(gvr).Namespace(r.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		r.t.Fatal(err)
	}
	return u
}

func (r *engRig) waitInstanceState(gvr schema.GroupVersionResource, name, want string, timeout time.Duration) {
	r.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		u := r.instance(gvr, name)
		st, _, _ := unstructured.NestedString(u.Object, "status", "state")
		if st == want {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%s is %q, not %s, after %s", name, st, want, timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (r *engRig) waitGone(gvr schema.GroupVersionResource, name string, timeout time.Duration) {
	r.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		_, err := r.dyn.Resource(gvr).Namespace(r.ns).Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%s still there %s after its deletion (err %v)", name, timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// requestLog records every request (method, path and, for writes, body).
type requestLog struct {
	mu   sync.Mutex
	n    int
	seen []string // writes: "METHOD path body"
	// leaseGets counts GETs of one Lease by name: a candidate in the
	// election reads it every retry period; a follower reads it once (to
	// see it is held) and then watches it.
	leaseGets map[string]int
}

func (l *requestLog) leaseReads(name string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.leaseGets[name]
}

func (l *requestLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// writes sorts the recorded writes: requeue patches and deletes of the
// named instance, and everything else (Lease writes, Events, status...).
func (l *requestLog) writes(ns, resource, name string) (patches, deletes int, others []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	path := "/namespaces/" + ns + "/" + resource + "/" + name
	for _, w := range l.seen {
		method, rest, _ := strings.Cut(w, " ")
		p, body, _ := strings.Cut(rest, " ")
		switch {
		case method == http.MethodPatch && strings.HasSuffix(p, path) &&
			strings.HasPrefix(body, `{"metadata":{"annotations":{"`+engine.RequeueAnnotation+`":"`) && strings.Count(body, ":") <= 6:
			patches++
		case method == http.MethodDelete && strings.HasSuffix(p, path):
			deletes++
		case method == http.MethodPost && envtest.IsAccessReview(p):
			// Access reviews (what this user may do) store nothing.
		default:
			others = append(others, w)
		}
	}
	return patches, deletes, others
}

type recorder struct {
	next http.RoundTripper
	log  *requestLog
}

func (c *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	entry := ""
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		body := ""
		if req.GetBody != nil {
			if rc, err := req.GetBody(); err == nil {
				b, _ := io.ReadAll(rc)
				rc.Close()
				body = string(b)
			}
		}
		entry = fmt.Sprintf("%s %s %s", req.Method, req.URL.Path, body)
	}
	c.log.mu.Lock()
	c.log.n++
	if dir, name := filepath.Split(req.URL.Path); req.Method == http.MethodGet && strings.HasSuffix(dir, "/leases/") {
		if c.log.leaseGets == nil {
			c.log.leaseGets = map[string]int{}
		}
		c.log.leaseGets[name]++
	}
	if entry != "" {
		c.log.seen = append(c.log.seen, entry)
	}
	c.log.mu.Unlock()
	return c.next.RoundTrip(req)
}
