package kro

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"

	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/prereq"
)

// grantedIdentity is a ServiceAccount of the rig's namespace holding
// exactly deploy/rbac-controller.yaml's rules, a Lease Role for lease in
// the rig's namespace (rbac-lease.yaml's rules, for that name), and what
// `kroscope rbac --bind` prints for the cluster's graphs, applied as
// printed. It returns the identity (the admin impersonating it) and the
// names of the graphs a role was printed for.
func (r *kroRig) grantedIdentity(t *testing.T, lease string) (*rest.Config, map[string]bool) {
	t.Helper()
	const sa = "kroscope-granted"
	kube := r.env.Kubernetes()
	// Built (minutes on a loaded machine) before the minute the API calls
	// below share starts.
	kroscope := prereq.Kroscope(t)
	ctx := ctxT(t)
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: r.ns}}
	controller := deployClusterRole(t, "rbac-controller.yaml")
	controller.Name = "kroscope-granted:controller:" + r.ns
	leaseRole := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "kroscope-granted-lease", Namespace: r.ns}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{lease}, Verbs: []string{"get", "update"}},
	}}
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(kube.RbacV1().ClusterRoles().Create(ctx, controller, metav1.CreateOptions{}))
	must(kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: controller.Name},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: controller.Name}, Subjects: subject}, metav1.CreateOptions{}))
	must(kube.RbacV1().Roles(r.ns).Create(ctx, leaseRole, metav1.CreateOptions{}))
	must(kube.RbacV1().RoleBindings(r.ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: leaseRole.Name},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: leaseRole.Name}, Subjects: subject}, metav1.CreateOptions{}))
	t.Cleanup(func() {
		_ = kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), controller.Name, metav1.DeleteOptions{})
		_ = kube.RbacV1().ClusterRoles().Delete(context.Background(), controller.Name, metav1.DeleteOptions{})
	})

	// `kroscope rbac` on the cluster's graphs, as an admin runs it.
	cmd := exec.Command(kroscope, "rbac", "--kubeconfig", envtest.Kubeconfig(t, r.env.Config), "--bind", r.ns+"/"+sa)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kroscope rbac: %v\n%s", err, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Logf("kroscope rbac said:\n%s", stderr.String())
	}
	graphs := map[string]bool{}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("kroscope rbac's output: %v\n%s", err, out)
		}
		if len(obj) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: obj}
		switch u.GetKind() {
		case "ClusterRole":
			var cr rbacv1.ClusterRole
			must(nil, runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &cr))
			graphs[cr.Annotations["kroscope.dev/graph"]] = true
			must(kube.RbacV1().ClusterRoles().Create(ctx, &cr, metav1.CreateOptions{}))
			t.Cleanup(func() { _ = kube.RbacV1().ClusterRoles().Delete(context.Background(), cr.Name, metav1.DeleteOptions{}) })
		case "ClusterRoleBinding":
			var b rbacv1.ClusterRoleBinding
			must(nil, runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &b))
			must(kube.RbacV1().ClusterRoleBindings().Create(ctx, &b, metav1.CreateOptions{}))
			t.Cleanup(func() {
				_ = kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), b.Name, metav1.DeleteOptions{})
			})
		default:
			t.Fatalf("kroscope rbac printed a %s", u.GetKind())
		}
	}
	t.Logf("kroscope rbac printed roles for %d graphs (%d bytes)", len(graphs), len(out))
	cfg := rest.CopyConfig(r.env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + r.ns + ":" + sa}
	return cfg, graphs
}

// deployClusterRole reads the ClusterRole of a deploy/ file.
func deployClusterRole(t *testing.T, file string) *rbacv1.ClusterRole {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(prereq.RepoRoot(), "deploy", file))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		var u unstructured.Unstructured
		if err := utilyaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatalf("deploy/%s: %v", file, err)
		}
		if u.GetKind() != "ClusterRole" {
			continue
		}
		var cr rbacv1.ClusterRole
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &cr); err != nil {
			t.Fatal(err)
		}
		return &rbacv1.ClusterRole{Rules: cr.Rules}
	}
	t.Fatalf("deploy/%s has no ClusterRole", file)
	return nil
}
