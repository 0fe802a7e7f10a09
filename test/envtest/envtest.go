// Package envtest starts a real kube-apiserver and etcd for end-to-end tests
// (controller-runtime's envtest, with the binaries that `make assets` builds
// from Go modules) and hands tests a *rest.Config.
//
// One API server is shared by every test of a test binary; TestMain must call
// Run so it is stopped at the end:
//
//	func TestMain(m *testing.M) { os.Exit(envtest.Run(m)) }
package envtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrlenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/test/prereq"
)

// K8sVersion is the kube-apiserver version hack/assets.sh builds.
func K8sVersion() string { return prereq.K8sVersion() }

// Env is a running API server.
type Env struct {
	// Config is a cluster-admin client configuration.
	Config *rest.Config
	// Environment is controller-runtime's handle, for tests that need to
	// stop or restart the control plane.
	Environment *ctrlenvtest.Environment
	kube        kubernetes.Interface
	auditLog    string // see EnableAudit
}

var (
	mu      sync.Mutex
	shared  *Env
	started bool
	err     error
)

// AssetsDir returns the folder holding kube-apiserver and etcd (see
// package prereq).
func AssetsDir() string { return prereq.AssetsDir() }

// Start returns the shared API server, starting it on first use. Without the
// binaries the test is skipped with one line naming the command that builds
// them, or fails when CI=true.
func Start(t testing.TB) *Env {
	t.Helper()
	dir := prereq.APIServer(t)
	mu.Lock()
	defer mu.Unlock()
	if !started {
		started = true
		shared, err = start(dir)
	}
	if err != nil {
		t.Fatalf("starting the test API server: %v", err)
	}
	return shared
}

func start(dir string) (*Env, error) {
	// envtest logs through controller-runtime's logger; left unset, its
	// first line after 30 s of the process prints a warning with a stack
	// (the benchmarks start a server per run, minutes in).
	ctrllog.SetLogger(logr.Discard())
	env := &ctrlenvtest.Environment{
		BinaryAssetsDirectory:    dir,
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	// A fixed certificate folder keeps the serving certificate across
	// RestartAPIServer, so clients built before a restart still trust it.
	certDir, err := os.MkdirTemp("", "kroscope-envtest-")
	if err != nil {
		return nil, err
	}
	api := env.ControlPlane.GetAPIServer()
	api.CertDir = certDir
	// The admin authenticates with a static token rather than envtest's
	// client certificate: the API server verifies a certificate chain on
	// every request (an ECDSA verification each time, 7% of its CPU under
	// load), a token is a map lookup. Most clusters' controllers present
	// tokens too (ServiceAccounts, cloud logins).
	token := rand.String(32)
	tokens := filepath.Join(certDir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(token+",kroscope-admin,kroscope-admin,system:masters\n"), 0o600); err != nil {
		return nil, err
	}
	// RBAC, so impersonation and forbidden writes behave as on a real cluster.
	api.Configure().
		Set("authorization-mode", "RBAC").
		// Without this a server holding watches takes longer to stop than
		// the stop timeout, and RestartAPIServer would find it still running.
		Set("shutdown-watch-termination-grace-period", "2s").
		Set("service-cluster-ip-range", "10.0.0.0/16").
		Set("token-auth-file", tokens)
	auditLog := ""
	if audit.Load() {
		flags, log, err := configureAudit(certDir)
		if err != nil {
			return nil, err
		}
		for k, v := range flags {
			api.Configure().Set(k, v)
		}
		auditLog = log
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, err
	}
	cfg = rest.AnonymousClientConfig(cfg) // keeps the server's CA
	cfg.BearerToken = token
	cfg.QPS, cfg.Burst = 500, 1000
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	return &Env{Config: cfg, Environment: env, kube: kube, auditLog: auditLog}, nil
}

// Run runs the tests and then stops the shared API server if one started.
func Run(m *testing.M) int {
	code := m.Run()
	// The kroscope binary a test built (prereq.Kroscope) goes too: 120 MB
	// in the temp folder per test binary otherwise.
	defer prereq.Cleanup()
	mu.Lock()
	defer mu.Unlock()
	if shared != nil {
		if err := shared.Environment.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the test API server:", err)
		}
		_ = os.RemoveAll(shared.Environment.ControlPlane.GetAPIServer().CertDir)
		shared = nil
	}
	return code
}

// Kubernetes returns a typed admin clientset.
func (e *Env) Kubernetes() kubernetes.Interface { return e.kube }

// Clients returns a fresh client Set for the admin identity.
func (e *Env) Clients(t testing.TB) *client.Set {
	t.Helper()
	s, err := client.NewSet(rest.CopyConfig(e.Config))
	if err != nil {
		t.Fatalf("building clients: %v", err)
	}
	return s
}

// Namespace creates a namespace with a unique name derived from the test's.
// Namespaces are not deleted: the test API server has no namespace
// controller, so they would stay Terminating anyway.
func (e *Env) Namespace(t testing.TB) string {
	t.Helper()
	base := strings.ToLower(t.Name())
	base = strings.Map(func(r rune) rune {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			return r
		}
		return '-'
	}, base)
	base = strings.Trim(base, "-")
	if len(base) > 40 {
		base = strings.Trim(base[:40], "-")
	}
	name := base + "-" + rand.String(5)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	return name
}

// InstallCRDs creates (or replaces) CRDs and waits until they are
// Established and served.
func (e *Env) InstallCRDs(t testing.TB, crds ...*apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	if len(crds) == 0 {
		return
	}
	_, err := ctrlenvtest.InstallCRDs(e.Config, ctrlenvtest.CRDInstallOptions{
		CRDs:               crds,
		MaxTime:            time.Minute,
		PollInterval:       100 * time.Millisecond,
		ErrorIfPathMissing: false,
	})
	if err != nil {
		t.Fatalf("installing CRDs: %v", err)
	}
}

// RestartAPIServer stops the kube-apiserver (etcd keeps running), waits for
// downtime, and starts it again on the same address and data. Clients
// built from Config keep working after it returns.
func (e *Env) RestartAPIServer(t testing.TB, downtime time.Duration) {
	t.Helper()
	api := e.Environment.ControlPlane.GetAPIServer()
	if err := api.Stop(); err != nil {
		t.Fatalf("stopping kube-apiserver: %v", err)
	}
	time.Sleep(downtime)
	if err := api.Start(); err != nil {
		t.Fatalf("restarting kube-apiserver: %v", err)
	}
}

// StartStandalone starts an API server of its own (not the tests' shared
// one), for programs such as hack/devcluster; the caller stops it with
// Environment.Stop.
func StartStandalone() (*Env, error) {
	dir := AssetsDir()
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return nil, fmt.Errorf("no %s in %s: run %s", b, dir, prereq.BuildCommand)
		}
	}
	return start(dir)
}
