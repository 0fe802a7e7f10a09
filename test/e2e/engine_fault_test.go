package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/headless"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/metadata"
	"github.com/kroscope/kroscope/test/engrun"
	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/graphs"
	ctrlenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
)

const faultInstances = 50

// checkChildren asserts every instance of gvr in the namespace has exactly
// one ConfigMap per node, and no ConfigMap belongs to a missing instance.
func (r *engRig) checkChildren(gvr schema.GroupVersionResource, nodes int) {
	r.t.Helper()
	ctx := context.Background()
	insts, err := r.dyn.Resource(gvr).Namespace(r.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		r.t.Fatal(err)
	}
	uids := map[string]bool{}
	for _, in := range insts.Items {
		uids[string(in.GetUID())] = true
	}
	cms, err := r.dyn.Resource(gvrConfigMap).Namespace(r.ns).List(ctx, metav1.ListOptions{LabelSelector: metadata.InstanceIDLabel})
	if err != nil {
		r.t.Fatal(err)
	}
	seen := map[string]int{}
	for _, cm := range cms.Items {
		l := cm.GetLabels()
		if !uids[l[metadata.InstanceIDLabel]] {
			r.t.Errorf("orphan child %s: instance uid %s does not exist", cm.GetName(), l[metadata.InstanceIDLabel])
		}
		seen[l[metadata.InstanceIDLabel]+"/"+l[metadata.NodeIDLabel]]++
	}
	for k, n := range seen {
		if n != 1 {
			r.t.Errorf("%d children for %s", n, k)
		}
	}
	if want := len(insts.Items) * nodes; len(cms.Items) != want {
		r.t.Errorf("%d children, want %d", len(cms.Items), want)
	}
}

// The API server is stopped for 10 seconds while 50 instances converge, then
// started again: every instance ends ACTIVE, with no duplicate or orphan
// children, and the broken watches are reported then recover.
func TestEngineSurvivesAPIServerRestart(t *testing.T) {
	r := newPrivateRig(t)
	run, gvr := r.serveFile("engfault", graphs.Chain("engfault", "EngFault"), nil)
	for i := range faultInstances {
		r.createInstance(gvr, "EngFault", fmt.Sprintf("f%02d", i), nil)
	}
	// Stop the API server while they converge, watching for broken watches.
	var sawBroken atomic.Bool
	stopWatching := make(chan struct{})
	go func() {
		for {
			select {
			case <-stopWatching:
				return
			case <-time.After(100 * time.Millisecond):
			}
			for _, w := range run.e.Snapshot().Watches {
				if !w.Healthy {
					sawBroken.Store(true)
				}
			}
		}
	}()
	active := 0
	for _, in := range run.e.Snapshot().Instances {
		if in.State == reconciler.InstanceStateActive {
			active++
		}
	}
	t.Logf("stopping the API server with %d of %d instances ACTIVE", active, faultInstances)
	r.restartAPIServer(10 * time.Second)
	start := time.Now()
	res := gvr.Resource + "." + gvr.Group
	run.allInState(res, faultInstances, reconciler.InstanceStateActive, 3*time.Minute)
	t.Logf("all %d ACTIVE %s after the API server came back", faultInstances, time.Since(start).Round(time.Millisecond))
	run.waitFor(time.Minute, "every watch healthy again", func(s *state.Snapshot) bool {
		for _, w := range s.Watches {
			if !w.Healthy {
				return false
			}
		}
		return true
	})
	close(stopWatching)
	if !sawBroken.Load() {
		t.Errorf("no watch was reported broken while the API server was down")
	}
	r.checkChildren(gvr, 3)
}

// kubeconfig writes a kubeconfig file for cfg.
func kubeconfig(t *testing.T, cfg *rest.Config) string { return envtest.Kubeconfig(t, cfg) }

// TestEngineHelperProcess is not a test: it is the engine run in a child
// process (so it can be SIGKILLed) by the tests below.
func TestEngineHelperProcess(t *testing.T) {
	kc := os.Getenv("KROSCOPE_ENGINE_CHILD_KUBECONFIG")
	if kc == "" {
		t.Skip("helper process for the kill test")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	// SIGTERM ends it as it ends `kroscope run`; SIGKILL, as it comes.
	term, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	run := engrun.Start(t, engrun.Config{
		Rest: cfg, Namespace: os.Getenv("KROSCOPE_ENGINE_CHILD_NAMESPACE"), RequeueInterval: 5 * time.Second,
		Run: func(ctx context.Context, e *engine.Engine) error {
			return headless.Run(ctx, e, os.Stdout, headless.Options{})
		},
	}, func(o *engine.Options) {
		o.RGDPaths = []string{os.Getenv("KROSCOPE_ENGINE_CHILD_RGD")}
		if id := os.Getenv("KROSCOPE_ENGINE_CHILD_LEASE_IDENTITY"); id != "" {
			o.DisableLease = false
			o.Identity = id
			o.LeaseNamespace = o.Namespace
			o.LeaseName = "kroscope-test"
			o.LeaseDuration = 3 * time.Second
		}
	})
	select {
	case <-term.Done():
	case <-run.Done():
	}
	_ = run.Stop()
}

// startChild runs the engine in a child process.
func (r *engRig) startChild(kc, rgd string, env ...string) *exec.Cmd {
	r.t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestEngineHelperProcess$", "-test.v")
	cmd.Env = append(os.Environ(),
		"KROSCOPE_ENGINE_CHILD_KUBECONFIG="+kc, "KROSCOPE_ENGINE_CHILD_RGD="+rgd, "KROSCOPE_ENGINE_CHILD_NAMESPACE="+r.ns)
	cmd.Env = append(cmd.Env, env...)
	out, err := os.Create(filepath.Join(r.dir, fmt.Sprintf("child-%d.log", time.Now().UnixNano())))
	if err != nil {
		r.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		out.Close()
	})
	return cmd
}

// countActive counts ACTIVE instances from their status in the cluster.
func (r *engRig) countActive(gvr schema.GroupVersionResource) int {
	list, err := r.dyn.Resource(gvr).Namespace(r.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return -1
	}
	n := 0
	for _, in := range list.Items {
		if s, _, _ := unstructuredString(in.Object, "status", "state"); s == reconciler.InstanceStateActive {
			n++
		}
	}
	return n
}

// kroscope is SIGKILLed while 50 instances converge and started again: all
// end ACTIVE, with no duplicate and no orphan children.
func TestEngineSurvivesSIGKILL(t *testing.T) {
	r := newEngRig(t)
	rgd := r.writeFile("rgd.yaml", graphs.Chain("engkill", "EngKill"))
	kc := kubeconfig(t, r.cfg)
	// A first in-process engine installs the CRD so the test can create
	// instances before the child starts; it then stops.
	first := r.start(func(o *engine.Options) { o.RGDPaths = []string{rgd} })
	gvr := first.graphServed("engkill")
	if err := first.stop(); err != nil {
		t.Fatal(err)
	}

	child := r.startChild(kc, rgd)
	for i := range faultInstances {
		r.createInstance(gvr, "EngKill", fmt.Sprintf("k%02d", i), nil)
	}
	// Kill it as soon as it has made some progress, mid-convergence.
	deadline := time.Now().Add(2 * time.Minute)
	for r.countActive(gvr) < 5 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	at := r.countActive(gvr)
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, _ = child.Process.Wait()
	t.Logf("SIGKILLed the engine with %d of %d instances ACTIVE", at, faultInstances)
	if at == faultInstances {
		t.Logf("note: every instance was already ACTIVE when the kill landed")
	}

	r.startChild(kc, rgd)
	deadline = time.Now().Add(3 * time.Minute)
	for r.countActive(gvr) < faultInstances {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d instances ACTIVE after the restart", r.countActive(gvr), faultInstances)
		}
		time.Sleep(200 * time.Millisecond)
	}
	r.checkChildren(gvr, 3)
}

func unstructuredString(obj map[string]any, path ...string) (string, bool, error) {
	cur := any(obj)
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", false, nil
		}
		cur = m[p]
	}
	s, ok := cur.(string)
	return s, ok, nil
}

// privateRig is an engRig on an API server of its own, so it can be
// restarted without disturbing the shared one. Unlike the shared harness it
// asks kube-apiserver to close watches promptly on shutdown: with watches
// open, its HTTP server otherwise waits up to a minute for them, past
// envtest's stop timeout (after which controller-runtime kills it and
// cannot start it again).
type privateRig struct {
	*engRig
	cp *ctrlenvtest.Environment
}

func newPrivateRig(t *testing.T) *privateRig {
	t.Helper()
	envtest.Start(t) // skips (or fails in CI) without the binaries
	cp := &ctrlenvtest.Environment{
		BinaryAssetsDirectory:    envtest.AssetsDir(),
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  90 * time.Second,
	}
	// A certificate folder of our own survives Stop, so the restarted server
	// keeps its serving certificate and clients keep trusting it.
	cp.ControlPlane.APIServer = &ctrlenvtest.APIServer{CertDir: t.TempDir()}
	cp.ControlPlane.GetAPIServer().Configure().
		Set("authorization-mode", "RBAC").
		Set("service-cluster-ip-range", "10.0.0.0/16").
		Set("shutdown-watch-termination-grace-period", "2s")
	cfg, err := cp.Start()
	if err != nil {
		t.Fatalf("starting a private API server: %v", err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	cfg.QPS, cfg.Burst = 500, 1000
	r := &engRig{t: t, cfg: cfg, dir: t.TempDir(), dyn: dynamic.NewForConfigOrDie(cfg)}
	r.ns = "fault"
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": r.ns}}}
	if _, err := r.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return &privateRig{engRig: r, cp: cp}
}

// restartAPIServer stops kube-apiserver (etcd keeps running), waits, and
// starts it again on the same address, certificates and data.
func (p *privateRig) restartAPIServer(down time.Duration) {
	p.t.Helper()
	api := p.cp.ControlPlane.GetAPIServer()
	stopped := time.Now()
	if err := api.Stop(); err != nil {
		p.t.Fatalf("stopping kube-apiserver: %v", err)
	}
	p.t.Logf("kube-apiserver stopped in %s", time.Since(stopped).Round(time.Millisecond))
	time.Sleep(down)
	if err := api.Start(); err != nil {
		p.t.Fatalf("starting kube-apiserver again: %v", err)
	}
}
