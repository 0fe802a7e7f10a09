package deploy

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/confine"
	"github.com/kroscope/kroscope/reconciler/metadata"
	"github.com/kroscope/kroscope/test/engrun"
	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/graphs"
	"github.com/kroscope/kroscope/test/krocrds"
)

// confineGraph is a namespaced graph named name whose resources are
// resources (spec.resources items, written where they stand in the
// document).
func confineGraph(name, kind, resources string) string {
	return graphs.RGD(name, kind, `spec:
  target: string | default=""`, strings.ReplaceAll("\n"+resources, "\n  ", "\n"))
}

// escapeResources send a ConfigMap and a Deployment where the instance's
// spec says (kube-system, say).
const escapeResources = `  - id: config
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: ${schema.metadata.name}-config
        namespace: ${schema.spec.target}
      data:
        k: v
  - id: app
    template:
      apiVersion: apps/v1
      kind: Deployment
      metadata:
        name: ${schema.metadata.name}-app
        namespace: ${schema.spec.target}
      spec:
        selector:
          matchLabels: {app: escape}
        template:
          metadata:
            labels: {app: escape}
          spec:
            serviceAccountName: default
            containers:
            - name: app
              image: registry.k8s.io/pause:3.10
`

// sensitiveGraphs: one graph per kind refused as a child, and the words
// its refusal must say.
var sensitiveGraphs = []struct{ name, kind, resources, why string }{
	{"confine-namespace", "ConfineNamespace", `  - id: ns
    template:
      apiVersion: v1
      kind: Namespace
      metadata:
        name: ${schema.metadata.name}-ns
`, "cluster-scoped and the graph's instances are namespaced"},
	{"confine-clusterrole", "ConfineClusterRole", `  - id: role
    template:
      apiVersion: rbac.authorization.k8s.io/v1
      kind: ClusterRole
      metadata:
        name: ${schema.metadata.name}-escalate
      rules:
      - apiGroups: ["*"]
        resources: ["*"]
        verbs: ["*"]
`, "RBAC object"},
	{"confine-rolebinding", "ConfineRoleBinding", `  - id: binding
    template:
      apiVersion: rbac.authorization.k8s.io/v1
      kind: RoleBinding
      metadata:
        name: ${schema.metadata.name}-admin
      roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: admin}
      subjects:
      - kind: ServiceAccount
        name: default
        namespace: ${schema.metadata.namespace}
`, "RBAC object"},
	{"confine-crd", "ConfineCRD", `  - id: crd
    template:
      apiVersion: apiextensions.k8s.io/v1
      kind: CustomResourceDefinition
      metadata:
        name: ${schema.metadata.name + "s.evil.example.com"}
      spec:
        group: evil.example.com
        names: {kind: Evil, plural: evils}
        scope: Namespaced
        versions:
        - name: v1
          served: true
          storage: true
          schema:
            openAPIV3Schema: {type: object}
`, "CustomResourceDefinition"},
	{"confine-webhook", "ConfineWebhook", `  - id: hook
    template:
      apiVersion: admissionregistration.k8s.io/v1
      kind: MutatingWebhookConfiguration
      metadata:
        name: ${schema.metadata.name}-hook
      webhooks: []
`, "admission control"},
	{"confine-apiservice", "ConfineAPIService", `  - id: api
    template:
      apiVersion: apiregistration.k8s.io/v1
      kind: APIService
      metadata:
        name: v1.evil.example.com
      spec:
        group: evil.example.com
        version: v1
        groupPriorityMinimum: 1000
        versionPriority: 15
`, "APIService"},
}

// TestNamespaceUserCannotEscape: kroscope runs with its ServiceAccount's
// rights only (deploy/ plus, for every graph, the rules `kroscope rbac`
// prints: a ClusterRole, so RBAC alone would let each child land in any
// namespace). A namespace user who may create instances in one namespace
// only (team) cannot get an object written into another namespace
// (kube-system, or another team's) through a graph that takes the
// namespace from the instance's spec: the instance FAILS saying why and
// nothing is written there. A graph that creates a sensitive kind (RBAC,
// a CRD, an admission webhook, an APIService) or a cluster-scoped child of
// its namespaced instances is not served, its state and its RGD's status
// saying why, and nothing of it is written. The same graph annotated
// kroscope.dev/children-scope: Cluster by the cluster admin does write
// into the other namespace. A graph whose child kind kroscope is not
// granted is shown as not served, naming the rule, and served once the
// rule is granted.
func TestNamespaceUserCannotEscape(t *testing.T) {
	env := envtest.Start(t)
	env.InstallCRDs(t, krocrds.All(t)...)
	applyDeploy(t, env)
	admin := dynamic.NewForConfigOrDie(env.Config)
	kube := env.Kubernetes()
	team, victim := env.Namespace(t), env.Namespace(t)

	escape := confineGraph("confine-escape", "ConfineEscape", escapeResources)
	allowed := graphs.Annotated(confineGraph("confine-allowed", "ConfineAllowed", escapeResources), confine.ScopeAnnotation+": "+confine.ScopeCluster)
	norights := confineGraph("confine-norights", "ConfineNoRights", `  - id: job
    template:
      apiVersion: batch/v1
      kind: Job
      metadata:
        name: ${schema.metadata.name}-job
      spec:
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: job
              image: registry.k8s.io/pause:3.10
`)
	docs := []string{escape, allowed}
	for _, s := range sensitiveGraphs {
		docs = append(docs, confineGraph(s.name, s.kind, s.resources))
	}
	// Every graph's rules granted, the sensitive kinds' included: the
	// refusals below are kroscope's, not RBAC's.
	grantGraphs(t, env, docs...)
	for _, doc := range append(docs, norights) {
		rgd := rgdObject(t, doc)
		if _, err := admin.Resource(rgdGVR).Create(ctxT(t), rgd, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = admin.Resource(rgdGVR).Delete(context.Background(), rgd.GetName(), metav1.DeleteOptions{}) })
	}

	var logs engrun.Buffer
	e := startSAEngine(t, env, "confine", &logs)
	snapshot := func() string { return engrun.Describe(e.Snapshot()) + "\nlog:\n" + logs.String() }
	eventually(t, 2*time.Minute, func() string { return "the graphs are not settled:\n" + snapshot() }, func() bool {
		s := e.Snapshot()
		if !s.Mode.Reconciling || !graphServed(s, "confine-escape") || !graphServed(s, "confine-allowed") {
			return false
		}
		for _, sg := range sensitiveGraphs {
			if g := graphOf(s, sg.name); g == nil || !strings.Contains(g.Err, sg.why) {
				return false
			}
		}
		g := graphOf(s, "confine-norights")
		return g != nil && strings.Contains(g.Err, "needs the rule") && s.Startup.Done
	})
	s := e.Snapshot()
	for _, sg := range sensitiveGraphs {
		g := graphOf(s, sg.name)
		t.Logf("%s: %s", sg.name, g.Err)
		if g.Served {
			t.Errorf("%s is served", sg.name)
		}
	}
	t.Logf("confine-norights: %s", graphOf(s, "confine-norights").Err)
	// The RGD says so too (ControllerReady False), written by the SA.
	eventually(t, time.Minute, func() string { return "the RGD status does not say why:\n" + snapshot() }, func() bool {
		u, err := admin.Resource(rgdGVR).Get(ctxT(t), "confine-clusterrole", metav1.GetOptions{})
		c := envtest.Condition(u, "ControllerReady")
		return err == nil && c != nil && c["status"] == "False" && strings.Contains(fmt.Sprint(c["message"]), "RBAC object")
	})
	// Refused graphs get no instance CRD: nothing to create instances of.
	for _, name := range []string{"confine-clusterrole", "confine-norights"} {
		if _, err := admin.Resource(crdsGVR).Get(ctxT(t), graphOf(s, name).Resource, metav1.GetOptions{}); err == nil {
			t.Errorf("CRD %s was created for graph %s, which is not served", graphOf(s, name).Resource, name)
		}
	}

	// mallory may create instances in team, and nothing else.
	escapeGVR, allowedGVR := servedGVR(t, s, "confine-escape"), servedGVR(t, s, "confine-allowed")
	user := userConfig(t, env, "mallory", team, escapeGVR.Resource)
	for _, target := range []string{"kube-system", victim} {
		name := "to-" + strings.ReplaceAll(target, "kube-system", "ks")
		createAs(t, user, escapeGVR, "ConfineEscape", team, name, target)
		key := state.InstanceKey{Resource: graphOf(s, "confine-escape").Resource, Namespace: team, Name: name}
		eventually(t, 2*time.Minute, func() string { return name + " is not FAILED with the reason:\n" + snapshot() }, func() bool {
			in := e.Snapshot().Instance(key)
			return in != nil && in.State == reconciler.InstanceStateFailed && strings.Contains(instanceErrors(in), "not the instance's namespace "+team)
		})
		t.Logf("%s: %s", name, instanceErrors(e.Snapshot().Instance(key)))
	}
	time.Sleep(2 * time.Second) // a later pass would have written by now
	for _, ns := range []string{"kube-system", victim} {
		for _, gvr := range []schema.GroupVersionResource{{Version: "v1", Resource: "configmaps"}, {Group: "apps", Version: "v1", Resource: "deployments"}} {
			list, err := admin.Resource(gvr).Namespace(ns).List(ctxT(t), metav1.ListOptions{LabelSelector: metadata.ManagedByLabel})
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range list.Items {
				t.Errorf("%s %s/%s was written by kroscope for an instance in %s", o.GetKind(), ns, o.GetName(), team)
			}
		}
	}
	for _, gvr := range []schema.GroupVersionResource{
		{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
		{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"},
		{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"},
		crdsGVR, {Version: "v1", Resource: "namespaces"},
	} {
		list, err := admin.Resource(gvr).List(ctxT(t), metav1.ListOptions{LabelSelector: metadata.ManagedByLabel})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range list.Items {
			if gvr == crdsGVR && !strings.HasSuffix(o.GetName(), ".evil.example.com") {
				continue // graphs' own instance CRDs (this test's and others' on the shared server)
			}
			t.Errorf("%s %s was written by kroscope", o.GetKind(), o.GetName())
		}
	}

	// The graph that says so writes there (the admin's instance: mallory
	// may not create this kind).
	createAs(t, env.Config, allowedGVR, "ConfineAllowed", team, "granted", victim)
	eventually(t, 2*time.Minute, func() string { return "the annotated graph did not write into " + victim + ":\n" + snapshot() }, func() bool {
		_, err := kube.CoreV1().ConfigMaps(victim).Get(ctxT(t), "granted-config", metav1.GetOptions{})
		return err == nil
	})

	// Granted its rule, the graph lacking one is served.
	grantGraphs(t, env, norights)
	eventually(t, 3*time.Minute, func() string { return "confine-norights is not served once granted:\n" + snapshot() }, func() bool {
		return graphServed(e.Snapshot(), "confine-norights")
	})
}

var crdsGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

func graphOf(s *state.Snapshot, name string) *state.Graph {
	for i := range s.Graphs {
		if s.Graphs[i].Name == name {
			return &s.Graphs[i]
		}
	}
	return nil
}

// servedGVR is the instance kind of a served graph.
func servedGVR(t *testing.T, s *state.Snapshot, name string) schema.GroupVersionResource {
	t.Helper()
	g := graphOf(s, name)
	plural, group, _ := strings.Cut(g.Resource, ".")
	return schema.GroupVersionResource{Group: group, Version: "v1alpha1", Resource: plural}
}

func instanceErrors(in *state.Instance) string {
	var b strings.Builder
	b.WriteString(in.Message)
	for _, r := range in.Resources {
		b.WriteString(" | " + r.ID + ": " + r.Err)
	}
	return b.String()
}

// userConfig is user's identity, granted what a namespace user holds on
// the kro.run instances of plural, in ns only.
func userConfig(t *testing.T, env *envtest.Env, user, ns, plural string) *rest.Config {
	t.Helper()
	kube := env.Kubernetes()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "instances", Namespace: ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"kro.run"}, Resources: []string{plural}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}}}
	if _, err := kube.RbacV1().Roles(ns).Create(ctxT(t), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.RbacV1().RoleBindings(ns).Create(ctxT(t), &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "instances", Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "instances"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	return cfg
}

// createAs creates an instance as cfg's identity, spec.target set; it is
// deleted at the end (as the admin).
func createAs(t *testing.T, cfg *rest.Config, gvr schema.GroupVersionResource, kind, ns, name, target string) {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvr.GroupVersion().String(), "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"target": target},
	}}
	// The API server's authorizer follows Roles and bindings through its
	// informers: a grant made a moment ago may not be seen yet (seen on
	// 1.35), so a refusal is asked again for a while.
	ri := dynamic.NewForConfigOrDie(cfg).Resource(gvr).Namespace(ns)
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := ri.Create(ctxT(t), u, metav1.CreateOptions{})
		if err == nil {
			return
		}
		if !apierrors.IsForbidden(err) || time.Now().After(deadline) {
			t.Fatalf("creating %s %s/%s: %v", kind, ns, name, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
