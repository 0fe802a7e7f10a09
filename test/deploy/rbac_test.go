package deploy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/logsink"
	"github.com/kroscope/kroscope/engine/probes"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/test/engrun"
	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/graphs"
	"github.com/kroscope/kroscope/test/krocrds"
)

var rgdGVR = schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: "resourcegraphdefinitions"}

// startSAEngine runs an engine serving the cluster's graphs with the
// ServiceAccount's rights only, as the Deployment runs it (the Lease in
// kroscope-system), and stops it at the end of the test.
func startSAEngine(t *testing.T, env *envtest.Env, identity string, logs io.Writer) *engine.Engine {
	t.Helper()
	run := engrun.Start(t, engrun.Config{Rest: saConfig(env)}, func(o *engine.Options) {
		o.WatchClusterRGDs = true
		o.DisableLease = false
		o.LeaseNamespace, o.LeaseName, o.Identity = leaseNamespace, leaseName, identity
		o.ReconcileConfig = reconciler.ReconcileConfig{} // the Deployment's defaults
		o.CheckRights = true                             // as `kroscope run` does
		// Debug level: some refusals (kro detection) are logged there.
		o.Log = logsink.New(logsink.Options{Writer: logs, Verbosity: 1})
	})
	t.Cleanup(func() {
		if err := run.Stop(); err != nil {
			t.Errorf("engine %s: %v", identity, err)
		}
	})
	return run.E
}

func probeCode(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// The reconciler with only the rights deploy/ grants its ServiceAccount
// serves a graph from the cluster end to end: the instance becomes
// ACTIVE with its children, the RGD's status is written, the Lease is
// held, and deleting the instance removes its children (and an Event
// says so). Nothing it does is refused (no "forbidden" in its log, every
// watch synced). A second replica, not holding the Lease, is ready too.
func TestServiceAccountRBACServesClusterGraphs(t *testing.T) {
	env := envtest.Start(t)
	env.InstallCRDs(t, krocrds.All(t)...)
	applyDeploy(t, env)
	admin := dynamic.NewForConfigOrDie(env.Config)
	kube := env.Kubernetes()
	ns := env.Namespace(t)

	grantGraphs(t, env, graphs.Chain("deployrbac", "DeployRBAC"))
	rgd := rgdObject(t, graphs.Chain("deployrbac", "DeployRBAC"))
	if _, err := admin.Resource(rgdGVR).Create(ctxT(t), rgd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Resource(rgdGVR).Delete(context.Background(), "deployrbac", metav1.DeleteOptions{}) })

	var logs engrun.Buffer
	e := startSAEngine(t, env, "replica-a", &logs)
	live := httptest.NewServer(probes.Handler(func() error { return e.Healthy(time.Now()) }, e.Ready))
	defer live.Close()

	gvr := schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: "deployrbacs"}
	snapshot := func() string { return engrun.Describe(e.Snapshot()) + "\nlog:\n" + logs.String() }
	eventually(t, 2*time.Minute, func() string { return "the graph is not served and written to:\n" + snapshot() }, func() bool {
		s := e.Snapshot()
		return s.Mode.Reconciling && graphServed(s, "deployrbac")
	})
	inst := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kro.run/v1alpha1", "kind": "DeployRBAC",
		"metadata": map[string]any{"name": "one", "namespace": ns},
	}}
	if _, err := admin.Resource(gvr).Namespace(ns).Create(ctxT(t), inst, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	key := state.InstanceKey{Resource: "deployrbacs.kro.run", Namespace: ns, Name: "one"}
	eventually(t, 2*time.Minute, func() string { return "the instance is not ACTIVE:\n" + snapshot() }, func() bool {
		in := e.Snapshot().Instance(key)
		return in != nil && in.State == reconciler.InstanceStateActive
	})
	for _, name := range []string{"one-a", "one-a-b", "one-a-b-c"} {
		if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctxT(t), name, metav1.GetOptions{}); err != nil {
			t.Errorf("child ConfigMap %s: %v", name, err)
		}
	}
	eventually(t, time.Minute, func() string { return "the RGD's status is not Active" }, func() bool {
		got, err := admin.Resource(rgdGVR).Get(ctxT(t), "deployrbac", metav1.GetOptions{})
		st, _, _ := unstructured.NestedString(got.Object, "status", "state")
		return err == nil && st == "Active"
	})
	lease, err := kube.CoordinationV1().Leases(leaseNamespace).Get(ctxT(t), leaseName, metav1.GetOptions{})
	if err != nil || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != "replica-a" {
		t.Errorf("Lease %s/%s: %v %+v, want held by replica-a", leaseNamespace, leaseName, err, lease.Spec)
	}
	if code := probeCode(t, live.URL+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz of the holder = %d, want 200:\n%s", code, snapshot())
	}
	if code := probeCode(t, live.URL+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz of the holder = %d, want 200", code)
	}

	// The second replica: not ready before it runs, ready once synced,
	// while it waits for the Lease.
	var standbyLogs engrun.Buffer
	standby := startSAEngine(t, env, "replica-b", &standbyLogs)
	sb := httptest.NewServer(probes.Handler(func() error { return standby.Healthy(time.Now()) }, standby.Ready))
	defer sb.Close()
	eventually(t, 2*time.Minute, func() string { return "the standby is not ready:\n" + engrun.Describe(standby.Snapshot()) }, func() bool {
		return probeCode(t, sb.URL+"/readyz") == http.StatusOK
	})
	if m := standby.Snapshot().Mode; m.Reconciling || m.Holder != "replica-a" {
		t.Errorf("standby mode %+v, want observing with replica-a holding the Lease", m)
	}

	// Deleting the instance: its finalizer is removed once its children
	// are deleted.
	if err := admin.Resource(gvr).Namespace(ns).Delete(ctxT(t), "one", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, func() string { return "the instance is still there:\n" + snapshot() }, func() bool {
		_, err := admin.Resource(gvr).Namespace(ns).Get(ctxT(t), "one", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	for _, name := range []string{"one-a", "one-a-b", "one-a-b-c"} {
		if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctxT(t), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("child ConfigMap %s after the instance's deletion: %v, want not found", name, err)
		}
	}
	// The deletion is announced with an Event (a first state ACTIVE is
	// not: an Event per new instance is noise).
	eventually(t, time.Minute, func() string { return "no Event on the instance:\n" + logs.String() }, func() bool {
		evs, err := kube.CoreV1().Events(ns).List(ctxT(t), metav1.ListOptions{FieldSelector: "involvedObject.name=one"})
		for _, ev := range evs.Items {
			if ev.Source.Component == "kroscope" && ev.Reason == "Deleted" {
				return err == nil
			}
		}
		return false
	})
	for who, l := range map[string]string{"replica-a": logs.String(), "replica-b": standbyLogs.String()} {
		if strings.Contains(strings.ToLower(l), "forbidden") {
			t.Errorf("%s was refused something:\n%s", who, l)
		}
	}
	for _, w := range e.Snapshot().Watches {
		if !w.Synced || !w.Healthy {
			t.Errorf("watch %+v, want synced and healthy", w)
		}
	}
}

// With the ServiceAccount's identity, writes to kinds deploy/ does not
// grant are refused: Secrets (not granted by default), RBAC, another
// Lease, a Namespace; and nothing is read from Secrets.
func TestServiceAccountWritesNothingElse(t *testing.T) {
	env := envtest.Start(t)
	env.InstallCRDs(t, krocrds.All(t)...)
	applyDeploy(t, env)
	ns := env.Namespace(t)
	sa := kubernetes.NewForConfigOrDie(saConfig(env))
	ctx := ctxT(t)
	refused := map[string]error{}
	_, refused["create a Secret"] = sa.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
	_, refused["list Secrets"] = sa.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
	_, refused["create a ClusterRole"] = sa.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "escalate"}}, metav1.CreateOptions{})
	_, refused["create a RoleBinding"] = sa.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "x"},
		RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "admin"}}, metav1.CreateOptions{})
	_, refused["create a Namespace"] = sa.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "sa-made"}}, metav1.CreateOptions{})
	_, refused["get another Lease"] = sa.CoordinationV1().Leases(leaseNamespace).Get(ctx, "someone-else", metav1.GetOptions{})
	_, refused["get kube-system's Leases"] = sa.CoordinationV1().Leases("kube-system").Get(ctx, "kube-scheduler", metav1.GetOptions{})
	_, refused["create a Lease in its own namespace"] = sa.CoordinationV1().Leases(leaseNamespace).Create(ctx,
		&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "someone-else"}}, metav1.CreateOptions{})
	saDyn := dynamic.NewForConfigOrDie(saConfig(env))
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	refused["delete a CRD"] = saDyn.Resource(crds).Delete(ctx, "resourcegraphdefinitions.kro.run", metav1.DeleteOptions{})
	refused["create a ResourceGraphDefinition"] = func() error {
		_, err := saDyn.Resource(rgdGVR).Create(ctx, rgdObject(t, graphs.Chain("sa-made", "SAMade")), metav1.CreateOptions{})
		return err
	}()
	// No write on workloads or children of any kind by default: each
	// graph's are granted with it (`kroscope rbac`).
	_, refused["create a Deployment in kube-system"] = sa.AppsV1().Deployments("kube-system").Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
	_, refused["create a ConfigMap"] = sa.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
	_, refused["create a Pod"] = sa.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
	_, refused["patch a CRD no graph of it is granted"] = saDyn.Resource(crds).Patch(ctx, "resourcegraphdefinitions.kro.run", types.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`), metav1.PatchOptions{})
	for what, err := range refused {
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s as %s: %v, want forbidden", what, saUser, err)
		}
	}
	// What it is granted works with the same client (the refusals are RBAC's).
	if _, err := saDyn.Resource(rgdGVR).List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("list ResourceGraphDefinitions as %s: %v", saUser, err)
	}
}

func graphServed(s *state.Snapshot, name string) bool {
	for _, g := range s.Graphs {
		if g.Name == name {
			return g.Served
		}
	}
	return false
}

// TestDeployGrantsNoWildcard: no rule deploy/ ships holds "*" (in API
// groups, resources or verbs), and none writes a workload kind (Pods and
// what makes them) anywhere: those come with a graph, from `kroscope rbac`.
func TestDeployGrantsNoWildcard(t *testing.T) {
	workloads := map[string]bool{"pods": true, "deployments": true, "replicasets": true, "statefulsets": true, "daemonsets": true,
		"jobs": true, "cronjobs": true, "replicationcontrollers": true}
	writes := map[string]bool{"create": true, "update": true, "patch": true, "delete": true, "deletecollection": true}
	n := 0
	for _, obj := range deployObjects(t) {
		if obj.GetKind() != "ClusterRole" && obj.GetKind() != "Role" {
			continue
		}
		rules, _, _ := unstructured.NestedSlice(obj.Object, "rules")
		for i, r := range rules {
			n++
			rule, _ := r.(map[string]any)
			for _, field := range []string{"apiGroups", "resources", "verbs", "resourceNames", "nonResourceURLs"} {
				vals, _, _ := unstructured.NestedStringSlice(rule, field)
				for _, v := range vals {
					if strings.Contains(v, "*") {
						t.Errorf("%s %s rule %d: %s holds %q", obj.GetKind(), obj.GetName(), i, field, v)
					}
				}
			}
			res, _, _ := unstructured.NestedStringSlice(rule, "resources")
			verbs, _, _ := unstructured.NestedStringSlice(rule, "verbs")
			for _, r := range res {
				for _, v := range verbs {
					if workloads[r] && writes[v] {
						t.Errorf("%s %s rule %d: %s %s", obj.GetKind(), obj.GetName(), i, v, r)
					}
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("deploy/ holds no RBAC rules: nothing was checked")
	}
}
