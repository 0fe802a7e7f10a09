package deploy

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/prereq"
)

// deploy/'s rights cannot create or write any Lease but kroscope's own
// (issue #36): Kubernetes RBAC cannot limit `create` to a name, so deploy/
// creates kroscope's Lease itself, in kroscope's namespace, and grants its
// ServiceAccount get and update on that one name only (and list/watch of
// Leases, read only, to see other kroscopes). Asked with `kubectl auth
// can-i` as the ServiceAccount, as an admin checking a cluster would.
func TestServiceAccountCannotWriteOtherLeases(t *testing.T) {
	kubectl := prereq.Kubectl(t)
	env := envtest.Start(t)
	applyDeploy(t, env)
	kc := kubeconfig(t, env.Config)
	canI := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(kubectl, append([]string{"--kubeconfig", kc, "auth", "can-i", "--as=" + saUser}, args...)...)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kc)
		out, err := cmd.CombinedOutput()
		ans := strings.TrimSpace(string(out))
		if ans != "yes" && ans != "no" {
			t.Fatalf("kubectl auth can-i %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return ans
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"create", "leases", "-n", "kube-system"}, "no"},
		{[]string{"create", "leases", "-n", "kro-system"}, "no"},
		{[]string{"create", "leases", "-n", leaseNamespace}, "no"},
		{[]string{"create", "leases", "--all-namespaces"}, "no"},
		{[]string{"create", "leases/controller.kro.run", "-n", "kro-system"}, "no"},
		{[]string{"update", "leases/controller.kro.run", "-n", "kro-system"}, "no"},
		{[]string{"patch", "leases/kube-controller-manager", "-n", "kube-system"}, "no"},
		{[]string{"update", "leases/kroscope", "-n", "kube-system"}, "no"},
		{[]string{"delete", "leases/" + leaseName, "-n", leaseNamespace}, "no"},
		{[]string{"update", "leases/someone-else", "-n", leaseNamespace}, "no"},
		{[]string{"get", "leases/" + leaseName, "-n", leaseNamespace}, "yes"},
		{[]string{"update", "leases/" + leaseName, "-n", leaseNamespace}, "yes"},
		{[]string{"list", "leases", "--all-namespaces"}, "yes"},
	} {
		if got := canI(c.args...); got != c.want {
			t.Errorf("kubectl auth can-i %s --as=%s: %s, want %s", strings.Join(c.args, " "), saUser, got, c.want)
		}
	}
}
