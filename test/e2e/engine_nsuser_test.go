package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/tui"
)

// nsUserGraph is examples/webapp with a kind of its own, so that no other
// test's CRD is in the way.
func nsUserGraph(t *testing.T, r *engRig) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "webapp", "rgd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Replace(string(b), "kind: WebApp", "kind: NsWebApp", 1)
	doc = strings.Replace(doc, "name: webapp.kro.run", "name: nswebapp.kro.run", 1)
	return r.writeFile("nswebapp.yaml", doc)
}

// bindUser gives user the rules in the rig's namespace (a Role) and read
// on ResourceGraphDefinitions (a ClusterRole).
func bindUser(t *testing.T, r *engRig, user string, rules []rbacv1.PolicyRule) {
	t.Helper()
	ctx := context.Background()
	kube := r.env.Kubernetes()
	subj := []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}}
	name := user + "-" + r.ns
	if _, err := kube.RbacV1().Roles(r.ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.RbacV1().RoleBindings(r.ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: user}, Subjects: subj}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"kro.run"}, Resources: []string{"resourcegraphdefinitions"}, Verbs: []string{"get", "list", "watch"}},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name}, Subjects: subj}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = kube.RbacV1().ClusterRoles().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

// grantLeaseList lets user list and watch Leases in all namespaces, as a
// kroscope with a Lease of its own needs to see the other kroscopes'.
func grantLeaseList(t *testing.T, r *engRig, user string) {
	t.Helper()
	ctx := context.Background()
	kube := r.env.Kubernetes()
	name := user + "-leases-" + r.ns
	if _, err := kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"list", "watch"}},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = kube.RbacV1().ClusterRoles().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

// startAs runs an engine impersonating user.
func (r *engRig) startAs(user string, mod func(*engine.Options)) *engRun {
	r.t.Helper()
	admin := r.cfg
	cfg := rest.CopyConfig(admin)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	r.cfg = cfg
	defer func() { r.cfg = admin }()
	return r.start(mod)
}

func logCount(s *state.Snapshot, substr string) int {
	n := 0
	for _, l := range s.Logs {
		if strings.Contains(l.Message, substr) {
			n++
		}
	}
	return n
}

func graphNamed(s *state.Snapshot, name string) *state.Graph {
	for i := range s.Graphs {
		if s.Graphs[i].Name == name {
			return &s.Graphs[i]
		}
	}
	return nil
}

// resourceStates is "id=STATE ..." of an instance.
func resourceStates(in *state.Instance) string {
	var b strings.Builder
	for _, r := range in.Resources {
		b.WriteString(r.ID + "=" + r.State + " ")
	}
	return b.String()
}

// TestEngineNamespaceScopedUser: people who hold a Role in one namespace
// (plus read on ResourceGraphDefinitions), not cluster rights, observe
// that namespace with kroscope. The CRD cannot be read (it is cluster
// scoped): the kind is found by discovery and the graph is served; the
// namespace's instances and their resources' states are shown as the
// admin's reconciling engine sees them; what each user may do is checked
// (jane: everything in her namespace; jane2, read-only: observe only), a
// denied delete is refused before any request, and a kind jane2 may not
// list is reported once, not at every retry, and picked up once granted.
func TestEngineNamespaceScopedUser(t *testing.T) {
	r := newEngRig(t)
	path := nsUserGraph(t, r)
	const graphName = "nswebapp.kro.run"
	admin := r.start(func(o *engine.Options) { o.RGDPaths = []string{path} })
	gvr := admin.graphServed(graphName)
	resource := gvr.Resource + "." + gvr.Group
	r.createInstance(gvr, "NsWebApp", "blog", map[string]any{"replicas": 1})
	r.createInstance(gvr, "NsWebApp", "shop", map[string]any{"replicas": 2})
	// No controller runs Deployments here: once the admin engine created
	// them, their status says they are available, and both instances
	// turn ACTIVE.
	deploys := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	for name, n := range map[string]int64{"blog": 1, "shop": 2} {
		admin.waitFor(2*time.Minute, "the admin engine created deployment "+name, func(*state.Snapshot) bool {
			_, err := r.dyn.Resource(deploys).Namespace(r.ns).Get(context.Background(), name, metav1.GetOptions{})
			return err == nil
		})
		patch := fmt.Sprintf(`{"status":{"replicas":%d,"updatedReplicas":%d,"readyReplicas":%d,"availableReplicas":%d}}`, n, n, n, n)
		if _, err := r.dyn.Resource(deploys).Namespace(r.ns).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
			t.Fatal(err)
		}
	}
	want := admin.allInState(resource, 2, "ACTIVE", 2*time.Minute)

	all := []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}
	bindUser(t, r, "jane", all)
	read := []string{"get", "list", "watch"}
	bindUser(t, r, "jane2", []rbacv1.PolicyRule{
		{APIGroups: []string{gvr.Group}, Resources: []string{gvr.Resource}, Verbs: read},
		{APIGroups: []string{""}, Resources: []string{"configmaps", "services"}, Verbs: read},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: read},
		// no ingresses: that watch is forbidden
	})

	observe := func(o *engine.Options) {
		o.RGDPaths = []string{path}
		o.Observe = true
	}
	jane := r.startAs("jane", observe)
	jane.graphServed(graphName)
	got := jane.waitFor(2*time.Minute, "jane sees both instances with the admin's resource states", func(s *state.Snapshot) bool {
		for _, w := range want.Instances {
			in := s.Instance(w.Key)
			if in == nil || in.State != w.State || resourceStates(in) != resourceStates(w) {
				return false
			}
		}
		return true
	})
	if g := graphNamed(got, graphName); g == nil || !strings.Contains(g.Note, "cannot read CRD") || !strings.Contains(g.Note, "served (discovery)") {
		t.Errorf("jane's graph should say what was skipped without the CRD; got %+v", g)
	}
	if n := logCount(got, "instance CRD: cannot read CRD"); n != 1 {
		t.Errorf("the skipped CRD checks should be logged once, got %d lines", n)
	}
	ja := got.Capabilities.For(resource)
	if !ja.Observe.Allowed || !ja.Requeue.Allowed || !ja.Delete.Allowed || !ja.Edit.Allowed {
		t.Errorf("jane may do everything in %s: %+v", r.ns, ja)
	}
	if s := got.Capabilities.Summary(); s != "can observe, requeue, delete, edit" {
		t.Errorf("jane's summary: %q", s)
	}
	if got.Capabilities.User != "jane" {
		t.Errorf("the capabilities should name the user: %q", got.Capabilities.User)
	}
	if n := jane.Writes(); n != 0 {
		t.Errorf("jane's observing engine wrote %d times", n)
	}

	// Without --observe jane may not take the Lease (kroscope-system): she
	// observes, said once, instead of retrying the election for ever.
	janeRun := r.startAs("jane", func(o *engine.Options) {
		o.RGDPaths = []string{path}
		o.DisableLease = false
	})
	janeRun.graphServed(graphName)
	js := janeRun.waitFor(2*time.Minute, "jane (not --observe) sees both instances", func(s *state.Snapshot) bool {
		for _, w := range want.Instances {
			if in := s.Instance(w.Key); in == nil || in.State != w.State || resourceStates(in) != resourceStates(w) {
				return false
			}
		}
		return true
	})
	if js.Mode.Reconciling || !strings.Contains(js.Capabilities.Lease, "user jane may not get the lease kroscope-system/kroscope") {
		t.Errorf("jane without --observe should observe, saying she may not take the lease: mode %+v, lease %q", js.Mode, js.Capabilities.Lease)
	}
	if n := logCount(js, "not taking the lease"); n != 1 {
		t.Errorf("the denied lease should be logged once, got %d", n)
	}
	if n := janeRun.Writes(); n != 0 {
		t.Errorf("jane's engine, observing, wrote %d times", n)
	}
	janeRun.stop()

	jane2 := r.startAs("jane2", observe)
	jane2.graphServed(graphName)
	snap := jane2.waitFor(2*time.Minute, "jane2 sees both instances, her capabilities and the forbidden ingresses", func(s *state.Snapshot) bool {
		for _, w := range want.Instances {
			if in := s.Instance(w.Key); in == nil || in.State != w.State || resourceStates(in) != resourceStates(w) {
				return false
			}
		}
		forbidden := false
		for _, w := range s.Watches {
			forbidden = forbidden || (w.Forbidden && w.Resource == "ingresses.networking.k8s.io" && w.Namespace == r.ns)
		}
		return forbidden && len(s.Capabilities.Kinds) == 1
	})
	a := snap.Capabilities.For(resource)
	if !a.Observe.Allowed || a.Requeue.Allowed || a.Delete.Allowed || a.Edit.Allowed {
		t.Errorf("jane2 (read-only) may observe only: %+v", a)
	}
	if s := snap.Capabilities.Summary(); s != "can observe; cannot requeue, delete, edit" {
		t.Errorf("jane2's summary: %q", s)
	}
	if want := "user jane2 may not delete " + resource + " in " + r.ns; a.Delete.Why != want {
		t.Errorf("delete's reason: %q, want %q", a.Delete.Why, want)
	}
	key := state.InstanceKey{Resource: resource, Namespace: r.ns, Name: "blog"}
	err := jane2.e.Delete(context.Background(), key)
	if err == nil || !strings.Contains(err.Error(), "may not delete") {
		t.Errorf("jane2's delete should be refused with the reason, got %v", err)
	}
	if n := jane2.Deletes(); n != 0 {
		t.Errorf("the refused delete sent %d DELETE requests", n)
	}

	// The TUI over jane2's engine: the header says what she may do and
	// what is refused; ctrl+d flashes the reason and opens no dialog.
	m := tui.NewModel(jane2.e, tui.Options{ConfigPath: "-", Theme: "dark", ASCII: true, NoColor: true})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(200, 40),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	t.Cleanup(func() { _ = tm.Quit() })
	screenUntil(t, tm, "the header with jane2's capabilities", func(s string) bool {
		return strings.Contains(s, "jane2 can observe; cannot requeue, delete, edit") &&
			strings.Contains(s, "no access: ingresses.networking.k8s.io in "+r.ns) && strings.Contains(s, "/blog")
	})
	tm.Send(tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl})
	screenUntil(t, tm, "the denied delete's reason", func(s string) bool {
		return strings.Contains(s, "not allowed: user jane2 may not delete "+resource)
	})
	if n := jane2.Deletes(); n != 0 {
		t.Errorf("the TUI's denied delete sent %d DELETE requests", n)
	}

	// The forbidden list is retried in the background (client-go's
	// backoff) but said once.
	time.Sleep(15 * time.Second)
	snap = jane2.e.Snapshot()
	if n := logCount(snap, "no access: ingresses.networking.k8s.io in "+r.ns); n != 1 {
		t.Errorf("the forbidden ingresses should be logged once, got %d lines", n)
	}
	// Granted: the watch lists, and the note clears.
	role, err := r.env.Kubernetes().RbacV1().Roles(r.ns).Get(context.Background(), "jane2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses"}, Verbs: read})
	if _, err := r.env.Kubernetes().RbacV1().Roles(r.ns).Update(context.Background(), role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	jane2.waitFor(2*time.Minute, "the ingresses watch works once granted", func(s *state.Snapshot) bool {
		for _, w := range s.Watches {
			if w.Resource == "ingresses.networking.k8s.io" && (w.Forbidden || !w.Healthy) {
				return false
			}
		}
		return logCount(s, "access granted: watching ingresses.networking.k8s.io in "+r.ns) == 1
	})
	screenUntil(t, tm, "the no-access note gone", func(s string) bool {
		return strings.Contains(s, "/blog") && !strings.Contains(s, "no access:")
	})

	// docs/in-cluster.md's least RBAC, row by row: watching needs get/list/watch
	// on the instance kind and its children's kinds (jane2 above);
	// requeue adds patch on the instance kind, delete adds delete. jane3
	// has exactly these.
	bindUser(t, r, "jane3", []rbacv1.PolicyRule{
		{APIGroups: []string{gvr.Group}, Resources: []string{gvr.Resource}, Verbs: []string{"get", "list", "watch", "patch", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps", "services"}, Verbs: read},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: read},
		{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses"}, Verbs: read},
	})
	jane3 := r.startAs("jane3", observe)
	jane3.graphServed(graphName)
	snap = jane3.waitFor(2*time.Minute, "jane3 sees both instances and her capabilities", func(s *state.Snapshot) bool {
		for _, w := range want.Instances {
			if in := s.Instance(w.Key); in == nil || in.State != w.State || resourceStates(in) != resourceStates(w) {
				return false
			}
		}
		return len(s.Capabilities.Kinds) == 1
	})
	for _, w := range snap.Watches {
		if !w.Healthy {
			t.Errorf("jane3's watch %s is not healthy: %s", w.Name, w.Err)
		}
	}
	if s := snap.Capabilities.Summary(); s != "can observe, requeue, delete; cannot edit" {
		t.Errorf("jane3's summary: %q", s)
	}
	// What the capabilities promise, the API server grants: the requeue
	// annotation (a patch) and the delete, as jane3.
	cfg3 := rest.CopyConfig(r.cfg)
	cfg3.Impersonate = rest.ImpersonationConfig{UserName: "jane3"}
	dyn3 := dynamic.NewForConfigOrDie(cfg3)
	if _, err := dyn3.Resource(gvr).Namespace(r.ns).Patch(context.Background(), "blog", types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"kroscope.dev/requeue":"now"}}}`), metav1.PatchOptions{}); err != nil {
		t.Errorf("jane3 may requeue (patch), but: %v", err)
	}
	if err := dyn3.Resource(gvr).Namespace(r.ns).Delete(context.Background(), "shop", metav1.DeleteOptions{}); err != nil {
		t.Errorf("jane3 may delete, but: %v", err)
	}
	jane3.waitFor(2*time.Minute, "shop deleted (the admin engine tears it down)", func(s *state.Snapshot) bool {
		return s.Instance(state.InstanceKey{Resource: resource, Namespace: r.ns, Name: "shop"}) == nil
	})
	if _, err := dyn3.Resource(gvr).Namespace(r.ns).Update(context.Background(), r.createdCopy(t, gvr, "blog"), metav1.UpdateOptions{}); err == nil {
		t.Errorf("jane3 may not edit (update), but the update passed")
	}

	// With a Lease in her own namespace jane reconciles it, once she may
	// see every kroscope's Lease (list and watch, read only: without it
	// she cannot tell whether another kroscope writes her namespace, and
	// observes, docs/writers.md): the admin engine stops, hers takes the
	// Lease and reconciles a new instance.
	admin.stop()
	grantLeaseList(t, r, "jane")
	janeRec := r.startAs("jane", func(o *engine.Options) {
		o.RGDPaths = []string{path}
		o.DisableLease = false
		o.LeaseNamespace = r.ns
	})
	janeRec.graphServed(graphName)
	janeRec.waitFor(2*time.Minute, "jane holds the lease in her namespace", func(s *state.Snapshot) bool { return s.Mode.Reconciling })
	r.createInstance(gvr, "NsWebApp", "wiki", map[string]any{"replicas": 1})
	janeRec.waitFor(2*time.Minute, "jane's engine reconciles wiki", func(s *state.Snapshot) bool {
		in := s.Instance(state.InstanceKey{Resource: resource, Namespace: r.ns, Name: "wiki"})
		return in != nil && in.Resource("config") != nil && in.Resource("config").State == "SYNCED" && in.State == "IN_PROGRESS"
	})
	if _, err := r.env.Kubernetes().CoreV1().ConfigMaps(r.ns).Get(context.Background(), "wiki-config", metav1.GetOptions{}); err != nil {
		t.Errorf("jane's engine did not create wiki's ConfigMap: %v", err)
	}
}

// createdCopy reads an instance of the rig's namespace as the admin.
func (r *engRig) createdCopy(t *testing.T, gvr schema.GroupVersionResource, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := r.dyn.Resource(gvr).Namespace(r.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return u
}
