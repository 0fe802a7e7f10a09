package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/prereq"
)

// `kubectl apply -k deploy/ --dry-run=server` passes against a real API
// server: every object is valid as the server (its schemas, admission and
// Pod Security) sees it, and nothing is created. A server dry run of
// namespaced objects needs their Namespace to exist, so it is applied
// first, for real (it is deploy/namespace.yaml, applied by the same
// command on a real cluster).
func TestKustomizeDryRunServer(t *testing.T) {
	// hack/assets.sh builds kubectl beside the API server, at its version.
	kubectl := prereq.Kubectl(t)
	env := envtest.Start(t)
	kc := kubeconfig(t, env.Config)
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(kubectl, append([]string{"--kubeconfig", kc}, args...)...)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kc)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("apply", "-f", filepath.Join(deployDir(), "namespace.yaml"))
	out := run("apply", "-k", deployDir(), "--dry-run=server")
	t.Logf("kubectl apply -k deploy/ --dry-run=server:\n%s", out)
	for _, want := range []string{
		"namespace/kroscope-system",
		"serviceaccount/kroscope",
		"clusterrole.rbac.authorization.k8s.io/kroscope:controller",
		"clusterrole.rbac.authorization.k8s.io/kroscope:graphs",
		"clusterrolebinding.rbac.authorization.k8s.io/kroscope:controller",
		"clusterrolebinding.rbac.authorization.k8s.io/kroscope:graphs",
		"networkpolicy.networking.k8s.io/kroscope",
		"role.rbac.authorization.k8s.io/kroscope:lease",
		"rolebinding.rbac.authorization.k8s.io/kroscope:lease",
		"lease.coordination.k8s.io/kroscope",
		"clusterrole.rbac.authorization.k8s.io/kroscope:leases-read",
		"deployment.apps/kroscope",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the dry run does not list %s", want)
		}
	}
	// The namespace is labelled to enforce the restricted Pod Security
	// Standard: the Deployment's Pod template must meet it (the server
	// warns on a workload that would not).
	if strings.Contains(out, "PodSecurity") || strings.Contains(strings.ToLower(out), "warning") {
		t.Errorf("the dry run warns:\n%s", out)
	}
	if _, err := env.Kubernetes().AppsV1().Deployments(namespace).Get(ctxT(t), "kroscope", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after a dry run, the Deployment: %v, want not found", err)
	}
}
