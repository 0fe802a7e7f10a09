package e2e

import (
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/test/envtest"
)

// grant creates a Role and RoleBinding giving ServiceAccount sa the rules.
func grant(t *testing.T, r *rig, sa string, rules []rbacv1.PolicyRule) {
	t.Helper()
	kube := r.env.Kubernetes()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: r.ns}, Rules: rules}
	if _, err := kube.RbacV1().Roles(r.ns).Create(ctxT(t), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: r.ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: sa},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: r.ns}},
	}
	if _, err := kube.RbacV1().RoleBindings(r.ns).Create(ctxT(t), rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// instanceRules lets the ServiceAccount manage the instances themselves.
func instanceRules(r *rig) rbacv1.PolicyRule {
	gvr := r.g.Instance.GVR
	return rbacv1.PolicyRule{
		APIGroups: []string{gvr.Group},
		Resources: []string{gvr.Resource, gvr.Resource + "/status"},
		Verbs:     []string{"get", "list", "watch", "update", "patch"},
	}
}

// metricValue reads a counter from controller-runtime's registry.
func metricValue(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if matchLabels(m, labels) {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func matchLabels(m *dto.Metric, want map[string]string) bool {
	got := map[string]string{}
	for _, l := range m.GetLabel() {
		got[l.GetName()] = l.GetValue()
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

func TestReconcilerImpersonationAllowed(t *testing.T) {
	r := newRig(t, chainGraph("RtImpersonate"), func(c *rigConfig) { c.sas = map[string]string{"*": "deployer"} })
	grant(t, r, "deployer", []rbacv1.PolicyRule{
		instanceRules(r),
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	})
	user := "system:serviceaccount:" + r.ns + ":deployer"
	before := metricValue(t, reconciler.MetricImpersonationTotal, map[string]string{"namespace": r.ns, "service_account": "deployer", "result": "success"})

	r.create(chainInstance("RtImpersonate", "app"))
	r.untilState("app", reconciler.InstanceStateActive)
	r.deleteInstance("app")
	r.untilGone("app")

	writes := r.WritesBy()
	if len(writes[user]) == 0 {
		t.Fatalf("no write was sent as %s: %v", user, writes)
	}
	for u, paths := range writes {
		if u != user {
			t.Errorf("%d writes sent as %q instead of %s: %v", len(paths), u, user, paths)
		}
	}
	var sawCreate, sawStatus, sawDelete bool
	for _, p := range writes[user] {
		sawCreate = sawCreate || strings.HasPrefix(p, "PATCH") && strings.Contains(p, "/configmaps/")
		sawStatus = sawStatus || strings.HasSuffix(p, "/status")
		sawDelete = sawDelete || strings.HasPrefix(p, "DELETE")
	}
	if !sawCreate || !sawStatus || !sawDelete {
		t.Errorf("as %s: apply %v, status %v, delete %v; want all three", user, sawCreate, sawStatus, sawDelete)
	}
	after := metricValue(t, reconciler.MetricImpersonationTotal, map[string]string{"namespace": r.ns, "service_account": "deployer", "result": "success"})
	if after <= before {
		t.Errorf("%s{result=success} did not increase (%v -> %v)", reconciler.MetricImpersonationTotal, before, after)
	}
}

func TestReconcilerImpersonationForbidden(t *testing.T) {
	r := newRig(t, chainGraph("RtForbidden"), func(c *rigConfig) { c.sas = map[string]string{"*": "limited"} })
	// May manage the instance, but not ConfigMaps.
	grant(t, r, "limited", []rbacv1.PolicyRule{instanceRules(r)})
	labels := map[string]string{"namespace": r.ns, "service_account": "limited", "error_type": "permissions"}
	before := metricValue(t, reconciler.MetricImpersonationErrors, labels)

	r.create(chainInstance("RtForbidden", "app"))
	o := r.until("app", 60*time.Second, "ERROR", func(o reconciler.Observation, _ error) bool {
		return o.State.State == reconciler.InstanceStateError
	})
	d := o.Resources["first"]
	if d.State != reconciler.ResourceStateError || d.Err == nil || !strings.Contains(d.Err.Error(), "forbidden") ||
		!strings.Contains(d.Err.Error(), "system:serviceaccount:"+r.ns+":limited") {
		t.Fatalf("first: %s %v; want ERROR with the API server's forbidden message", d.State, d.Err)
	}
	if r.get(gvrConfigMap, r.ns, "app-first") != nil {
		t.Error("a ConfigMap was created although the ServiceAccount may not")
	}
	if after := metricValue(t, reconciler.MetricImpersonationErrors, labels); after <= before {
		t.Errorf("%s%v did not increase (%v -> %v)", reconciler.MetricImpersonationErrors, labels, before, after)
	}
	inst := r.instance("app")
	if c := envtest.Condition(inst, "ResourcesReady"); c == nil || !strings.Contains(c["message"].(string), "forbidden") {
		t.Errorf("ResourcesReady %v does not show the forbidden error", c)
	}
}
