package deploy

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kroscope/kroscope/test/engrun"
	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/graphs"
	"github.com/kroscope/kroscope/test/krocrds"
	"github.com/kroscope/kroscope/test/prereq"
)

// plantRGD reads a planted Secret (an external reference) and fails on its
// value: the token must reach no log line.
var plantRGD = graphs.RGD("deployplant", "DeployPlant", "",
	graphs.ExternalRef("creds", "v1", "Secret", "planted"),
	graphs.ConfigMap("convert", "${schema.metadata.name}-convert", "n: ${string(int(string(creds.data.token)))}"))

// The ServiceAccount's files as the kubelet mounts them in a Pod.
const saMount = "/var/run/secrets/kubernetes.io/serviceaccount"

// TestRunInAPod runs the real binary the way deploy/deployment.yaml runs
// it, in a sandbox made to look like its Pod: a private mount namespace
// with the ServiceAccount's token (from the TokenRequest API), CA and
// namespace mounted at /var/run/secrets/kubernetes.io/serviceaccount, a
// read-only root filesystem, uid/gid 65532 (distroless nonroot), no
// kubeconfig, KUBERNETES_SERVICE_HOST/PORT pointing at the test API
// server, and the Deployment's own args. It must pick the in-cluster
// config (its log says cluster "in-cluster"), serve /readyz and /healthz
// and metrics, win the Lease, reconcile with the ServiceAccount's rights,
// log only JSON lines in which no Secret value or token appears, and exit
// 0 on SIGTERM.
func TestRunInAPod(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the kroscope binary")
	}
	for _, tool := range []string{"unshare", "setpriv", "sh", "mount", "cp"} {
		if _, err := exec.LookPath(tool); err != nil {
			prereq.Missing(t, tool+" not found", "the Pod-like sandbox needs util-linux (apt-get install util-linux)")
		}
	}
	if os.Geteuid() != 0 {
		prereq.Platform(t, "the Pod-like sandbox (a mount namespace) needs root")
	}
	if err := exec.Command("unshare", "-m", "true").Run(); err != nil {
		prereq.Platform(t, fmt.Sprintf("cannot create a mount namespace here (%v)", err))
	}
	env := envtest.Start(t)
	env.InstallCRDs(t, krocrds.All(t)...)
	applyDeploy(t, env)
	kube := env.Kubernetes()
	admin := dynamic.NewForConfigOrDie(env.Config)
	ns := env.Namespace(t)
	// The whole test's calls (the build alone can take minutes here).
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()

	// Each graph's rights, as `kroscope rbac` prints them (the planted
	// graph reads a Secret: read on Secrets comes with it).
	grantGraphs(t, env, graphs.Chain("deploypod", "DeployPod"), plantRGD)
	const secretValue = "pl4nted-P0D-t0ken-8kq"
	if _, err := kube.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "planted"},
		StringData: map[string]string{"token": secretValue}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, doc := range []string{graphs.Chain("deploypod", "DeployPod"), plantRGD} {
		rgd := rgdObject(t, doc)
		if _, err := admin.Resource(rgdGVR).Create(ctx, rgd, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// Background: ctx is cancelled when the test returns, before cleanups.
		t.Cleanup(func() { _ = admin.Resource(rgdGVR).Delete(context.Background(), rgd.GetName(), metav1.DeleteOptions{}) })
	}

	// The Pod's files: the binary, and the ServiceAccount's mount.
	dir, err := os.MkdirTemp("", "kroscope-pod-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "kroscope")
	if out, err := exec.Command("cp", prereq.Kroscope(t), bin).CombinedOutput(); err != nil {
		t.Fatalf("copying kroscope: %v\n%s", err, out)
	}
	tr, err := kube.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, serviceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest for %s: %v", saUser, err)
	}
	saToken := tr.Status.Token
	mount := filepath.Join(dir, "serviceaccount")
	if err := os.Mkdir(mount, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"token": []byte(saToken), "ca.crt": env.Config.CAData, "namespace": []byte(namespace)} {
		if err := os.WriteFile(filepath.Join(mount, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// The Deployment's args, with its downward-API values and the probe
	// and metrics ports on free loopback ports.
	probeAddr, metricsAddr := freeAddr(t), freeAddr(t)
	args := deploymentArgs(t, map[string]string{
		"$(POD_NAMESPACE)": namespace, "$(POD_NAME)": "kroscope-pod-0",
		"--health-probe-bind-address=:8081":     "--health-probe-bind-address=" + probeAddr,
		"--metrics-bind-address=127.0.0.1:8078": "--metrics-bind-address=" + metricsAddr,
	})
	server, err := url.Parse(env.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	script := `set -e
mount -t tmpfs -o mode=0755 tmpfs /run
mkdir -p ` + saMount + `
cp "$POD_SA_FILES"/token "$POD_SA_FILES"/ca.crt "$POD_SA_FILES"/namespace ` + saMount + `/
mount -o remount,bind,ro /
exec setpriv --reuid 65532 --regid 65532 --clear-groups "$@"`
	cmd := exec.Command("unshare", append([]string{"-m", "--propagation", "private", "sh", "-c", script, "sh", bin}, args...)...)
	cmd.Env = []string{
		"KUBERNETES_SERVICE_HOST=" + server.Hostname(), "KUBERNETES_SERVICE_PORT=" + server.Port(),
		"POD_SA_FILES=" + mount, "HOME=/home/nonroot", "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
		"GOMEMLIMIT=536870912", // the limit's 512Mi, as resourceFieldRef passes it
	}
	var stdout, stderr engrun.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	exited := false
	t.Cleanup(func() {
		if !exited {
			_ = cmd.Process.Kill()
			<-done
		}
	})
	output := func() string { return "stdout:\n" + stdout.String() + "\nstderr:\n" + stderr.String() }

	probe := func(path string) int {
		resp, err := http.Get("http://" + probeAddr + path)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	eventually(t, 2*time.Minute, func() string { return "/readyz never answered 200\n" + output() }, func() bool {
		select {
		case err := <-done:
			exited = true
			t.Fatalf("kroscope exited early: %v\n%s", err, output())
		default:
		}
		return probe("/readyz") == http.StatusOK
	})
	if code := probe("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz = %d, want 200", code)
	}
	resp, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		t.Fatalf("metrics: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "kroscope_graphs_served") {
		t.Errorf("/metrics has no kroscope_graphs_served:\n%.2000s", body)
	}

	eventually(t, time.Minute, func() string { return "the Pod does not hold the Lease\n" + output() }, func() bool {
		l, err := kube.CoordinationV1().Leases(leaseNamespace).Get(ctx, leaseName, metav1.GetOptions{})
		return err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity == "kroscope-pod-0"
	})
	for _, in := range []struct{ resource, kind, name, state string }{
		{"deploypods", "DeployPod", "ok", "ACTIVE"},
		{"deployplants", "DeployPlant", "plant", "FAILED"},
	} {
		gvr := schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: in.resource}
		eventually(t, 2*time.Minute, func() string { return "the " + in.kind + " CRD is not served\n" + output() }, func() bool {
			_, err := admin.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
			return err == nil
		})
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kro.run/v1alpha1", "kind": in.kind,
			"metadata": map[string]any{"name": in.name, "namespace": ns}}}
		if _, err := admin.Resource(gvr).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 2*time.Minute, func() string { return in.kind + "/" + in.name + " is not " + in.state + "\n" + output() }, func() bool {
			got, err := admin.Resource(gvr).Namespace(ns).Get(ctx, in.name, metav1.GetOptions{})
			st, _, _ := unstructured.NestedString(got.Object, "status", "state")
			return err == nil && st == in.state
		})
	}

	termAt := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		exited = true
		if err != nil {
			t.Fatalf("after SIGTERM kroscope exited with %v, want 0\n%s", err, output())
		}
		t.Logf("exited 0 %s after SIGTERM", time.Since(termAt).Round(time.Millisecond))
	case <-time.After(2 * time.Minute):
		t.Fatalf("kroscope did not exit within 2 minutes of SIGTERM\n%s", output())
	}

	if lines := strings.SplitN(stderr.String(), "\n", 6); len(lines) > 5 {
		t.Logf("the first log lines:\n%s", strings.Join(lines[:5], "\n"))
	}
	// Every line, on both streams, is one JSON object.
	var msgs []map[string]any
	for stream, text := range map[string]string{"stdout": stdout.String(), "stderr": stderr.String()} {
		for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Errorf("%s line is not JSON (%v): %s", stream, err, line)
				continue
			}
			msgs = append(msgs, m)
		}
	}
	has := func(cond func(map[string]any) bool) bool {
		for _, m := range msgs {
			if cond(m) {
				return true
			}
		}
		return false
	}
	if !has(func(m map[string]any) bool { return m["msg"] == "connecting" && m["cluster"] == "in-cluster" }) {
		t.Errorf("no log line says it connected in-cluster\n%s", output())
	}
	if !has(func(m map[string]any) bool { return m["msg"] == "shutting down" }) {
		t.Errorf("no graceful shutdown in the log\n%s", output())
	}
	if has(func(m map[string]any) bool { return strings.HasPrefix(fmt.Sprint(m["msg"]), "shutdown grace passed") }) {
		t.Errorf("the shutdown ran past its grace\n%s", output())
	}
	all := output()
	for what, secret := range map[string]string{
		"the planted Secret's value": secretValue, "its base64": base64.StdEncoding.EncodeToString([]byte(secretValue)),
		"the ServiceAccount token": saToken,
	} {
		if strings.Contains(all, secret) {
			t.Errorf("%s is in the output", what)
		}
	}
}

// deploymentArgs returns the args of deploy/deployment.yaml's container,
// each with the replacements made.
func deploymentArgs(t *testing.T, replace map[string]string) []string {
	t.Helper()
	for _, obj := range deployObjects(t) {
		if obj.GetKind() != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
		if len(containers) != 1 {
			t.Fatalf("the Deployment has %d containers, want 1", len(containers))
		}
		raw, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
		out := make([]string, len(raw))
		for i, a := range raw {
			for from, to := range replace {
				a = strings.ReplaceAll(a, from, to)
			}
			out[i] = a
		}
		return out
	}
	t.Fatal("deploy/ has no Deployment")
	return nil
}

// freeAddr returns a loopback address with a port free right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
