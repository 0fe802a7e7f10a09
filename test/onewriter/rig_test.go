package onewriter

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/logsink"
	"github.com/kroscope/kroscope/test/engrun"
	"github.com/kroscope/kroscope/test/envtest"
)

// rig is a namespace on the audited API server.
type rig struct {
	t   *testing.T
	env *envtest.Env
	ns  string
	dir string
	dyn dynamic.Interface
	// failures are the verdict's errors, said again after the children's
	// logs (which a failed test prints last): CI shows an output's tail.
	failures []string
}

func newRig(t *testing.T) *rig {
	t.Helper()
	env := envtest.Start(t)
	r := &rig{t: t, env: env, ns: env.Namespace(t), dir: t.TempDir(), dyn: dynamic.NewForConfigOrDie(env.Config)}
	t.Cleanup(func() { // registered first: runs after the children's
		if len(r.failures) > 0 {
			t.Logf("what failed:\n%s", strings.Join(r.failures, "\n"))
		}
	})
	return r
}

// errorf fails the test with a message said again at its end.
func (r *rig) errorf(format string, args ...any) {
	r.t.Helper()
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
	r.t.Errorf(format, args...)
}

func (r *rig) writeFile(name, content string) string {
	r.t.Helper()
	p := filepath.Join(r.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
	return p
}

// kubeconfigAs writes a kubeconfig whose requests act as user (the admin
// impersonating it, with the admin's group): the API server's audit log
// names user on each of them.
func (r *rig) kubeconfigAs(user string) string {
	r.t.Helper()
	cfg := r.env.Config
	c := clientcmdapi.NewConfig()
	c.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	c.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken, Impersonate: user, ImpersonateGroups: []string{"system:masters"}}
	c.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: user}
	c.CurrentContext = "envtest"
	p := filepath.Join(r.dir, "kubeconfig-"+user)
	if err := clientcmd.WriteToFile(*c, p); err != nil {
		r.t.Fatal(err)
	}
	return p
}

// child is a kroscope engine in a process of its own (so it can be
// stopped and continued), acting as its own user.
type child struct {
	cmd *exec.Cmd
	log string
}

// startChild runs the engine as user, with identity, in a child process
// (TestHelperProcess below); env adds KROSCOPE_CHILD_* settings.
func (r *rig) startChild(user, rgd string, env ...string) *child {
	r.t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.v")
	cmd.Env = append(os.Environ(), "KROSCOPE_CHILD_KUBECONFIG="+r.kubeconfigAs(user), "KROSCOPE_CHILD_RGD="+rgd,
		"KROSCOPE_CHILD_NAMESPACE="+r.ns, "KROSCOPE_CHILD_IDENTITY="+user)
	cmd.Env = append(cmd.Env, env...)
	logPath := filepath.Join(r.dir, user+".log")
	out, err := os.Create(logPath)
	if err != nil {
		r.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		out.Close()
		if r.t.Failed() || os.Getenv("ENG_DEBUG") != "" {
			b, _ := os.ReadFile(logPath)
			lines := strings.Split(string(b), "\n")
			if len(lines) > 60 {
				lines = lines[len(lines)-60:]
			}
			r.t.Logf("%s's log:\n%s", user, strings.Join(lines, "\n"))
		}
	})
	return &child{cmd: cmd, log: logPath}
}

// logged reports whether the child's log holds s.
func (c *child) logged(s string) bool {
	b, _ := os.ReadFile(c.log)
	return strings.Contains(string(b), s)
}

// TestHelperProcess is not a test: it is the engine run in a child
// process by the tests above.
func TestHelperProcess(t *testing.T) {
	kc := os.Getenv("KROSCOPE_CHILD_KUBECONFIG")
	if kc == "" {
		t.Skip("helper process for the one-writer tests")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	term, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	dur, _ := time.ParseDuration(os.Getenv("KROSCOPE_CHILD_LEASE_DURATION"))
	ns := os.Getenv("KROSCOPE_CHILD_NAMESPACE")
	if os.Getenv("KROSCOPE_CHILD_ALL_NAMESPACES") != "" {
		ns = ""
	}
	run := engrun.Start(t, engrun.Config{Rest: cfg, Namespace: ns, RequeueInterval: 5 * time.Second}, func(o *engine.Options) {
		o.RGDPaths = []string{os.Getenv("KROSCOPE_CHILD_RGD")}
		o.DisableLease = false
		o.Identity = os.Getenv("KROSCOPE_CHILD_IDENTITY")
		o.LeaseNamespace = os.Getenv("KROSCOPE_CHILD_LEASE_NAMESPACE")
		o.LeaseName = os.Getenv("KROSCOPE_CHILD_LEASE_NAME")
		o.LeaseDuration = dur
		o.Log = logsink.New(logsink.Options{Writer: os.Stdout})
	})
	select {
	case <-term.Done():
	case <-run.Done():
	}
	_ = run.Stop()
}

// leaseHolder is the Lease's holder ("" when none or no Lease).
func (r *rig) leaseHolder(ns, name string) string {
	l, err := r.env.Kubernetes().CoordinationV1().Leases(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// eventually fails the test when cond is not true within d.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// instances lists the rig's instances of gvr.
func (r *rig) instances(gvr schema.GroupVersionResource) []unstructured.Unstructured {
	list, err := r.dyn.Resource(gvr).Namespace(r.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil
	}
	return list.Items
}

// createInstances creates n instances named prefix-0...
func (r *rig) createInstances(gvr schema.GroupVersionResource, kind, prefix string, n int) {
	r.t.Helper()
	for i := range n {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": gvr.Group + "/" + gvr.Version, "kind": kind,
			"metadata": map[string]any{"name": fmt.Sprintf("%s-%d", prefix, i), "namespace": r.ns},
		}}
		if _, err := r.dyn.Resource(gvr).Namespace(r.ns).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
			r.t.Fatal(err)
		}
	}
}

// setValue sets spec.value on every instance of gvr.
func (r *rig) setValue(gvr schema.GroupVersionResource, value string) {
	r.t.Helper()
	for _, in := range r.instances(gvr) {
		patch := fmt.Sprintf(`{"spec":{"value":%q}}`, value)
		if _, err := r.dyn.Resource(gvr).Namespace(r.ns).Patch(context.Background(), in.GetName(), "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
			r.t.Fatal(err)
		}
	}
}

// converged: every instance of gvr is ACTIVE with generation observed and
// its first ConfigMap holds value.
func (r *rig) converged(gvr schema.GroupVersionResource, n int, value string) bool {
	ins := r.instances(gvr)
	if len(ins) != n {
		return false
	}
	for _, in := range ins {
		st, _, _ := unstructured.NestedString(in.Object, "status", "state")
		if st != "ACTIVE" {
			return false
		}
		cm, err := r.env.Kubernetes().CoreV1().ConfigMaps(r.ns).Get(context.Background(), in.GetName()+"-a", metav1.GetOptions{})
		if err != nil || cm.Data["value"] != value {
			return false
		}
	}
	return true
}

// writesBy returns the writes (but access reviews) user sent at or after
// since, as the API server logged them.
func (r *rig) writesBy(user string, since time.Time) []envtest.AuditEvent {
	var out []envtest.AuditEvent
	for _, ev := range r.env.AuditWrites(r.t) {
		if ev.User != user || ev.Received.Before(since) || strings.HasSuffix(ev.Resource, "accessreviews") || ev.Resource == "selfsubjectreviews" {
			continue
		}
		out = append(out, ev)
	}
	return out
}

func metav1ListOptions() metav1.ListOptions { return metav1.ListOptions{} }

// leaseMoved is when user's first successful write of a Lease reached
// the API server: its taking of the Lease.
func (r *rig) leaseMoved(user string) time.Time {
	r.t.Helper()
	for _, ev := range r.env.AuditWrites(r.t) {
		if ev.User == user && ev.Resource == "leases" && ev.Namespace == r.ns && ev.Code < 300 {
			return ev.Received
		}
	}
	r.t.Fatalf("the audit log has no Lease write by %s", user)
	return time.Time{}
}
