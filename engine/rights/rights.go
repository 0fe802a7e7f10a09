// Package rights computes the RBAC rules serving a graph takes: what
// kroscope's ServiceAccount must be granted for that graph beyond
// deploy/'s own rights (rbac-controller.yaml). `kroscope rbac` prints them
// as a ClusterRole; the engine asks the API server (SelfSubjectAccessReview)
// for each before it serves a graph, and shows the graph as not served,
// naming the first rule missing, while one is.
//
// The verbs are the requests the reconciler makes, no more: children are
// watched (get, list, watch), applied server-side (patch; create for a new
// object) and deleted (pruning, deleting an instance); external references
// are read; instances get kroscope's finalizer and ApplySet annotations
// (patch) and their status (patch on /status).
package rights

import (
	"cmp"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kroscope/kroscope/reconciler/graph"
)

// Verb lists, in the order `kubectl create role` prints them.
var (
	ChildVerbs    = []string{"get", "list", "watch", "create", "patch", "delete"}
	ReadVerbs     = []string{"get", "list", "watch"}
	InstanceVerbs = []string{"get", "list", "watch", "patch"}
	StatusVerbs   = []string{"patch"}
	CRDVerbs      = []string{"patch"}
)

// CRDs are CustomResourceDefinitions.
var CRDs = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// Rule is one RBAC policy rule: verbs on resources (plurals, maybe with a
// subresource) of one API group.
type Rule struct {
	Group     string
	Resources []string
	Verbs     []string
	// ResourceNames narrows the rule to these objects ("" : every one).
	ResourceNames []string
	// Namespaced: every resource of the rule is namespaced (a RoleBinding
	// in a namespace could grant it there).
	Namespaced bool
}

// Need is one resource and the verbs a graph needs on it.
type Need struct {
	GVR        schema.GroupVersionResource
	Verbs      []string
	Namespaced bool
	// Name narrows the need to one object ("": every one).
	Name string
	// Why: the instance, or the resource id that needs it.
	Why string
}

// ForGraph lists what serving g takes: its instances, their status, every
// managed resource's kind and every external reference's kind.
func ForGraph(g *graph.Graph) []Need {
	inst := g.Instance.GVR
	needs := []Need{
		{GVR: inst, Verbs: InstanceVerbs, Namespaced: g.Instance.Namespaced, Why: "instances"},
		{GVR: inst.GroupVersion().WithResource(inst.Resource + "/status"), Verbs: StatusVerbs, Namespaced: g.Instance.Namespaced, Why: "instance status"},
		// The instance CRD is applied (server-side) from the graph's
		// schema: patch on it by name. Creating it, which RBAC cannot
		// narrow to a name, is deploy/rbac-controller.yaml's.
		{GVR: CRDs, Verbs: CRDVerbs, Name: inst.GroupResource().String(), Why: "instance CRD"},
	}
	for _, id := range g.TopologicalOrder {
		res := g.Resources[id]
		verbs := ChildVerbs
		if res.External || res.ExternalCollection {
			verbs = ReadVerbs
		}
		needs = append(needs, Need{GVR: res.GVR, Verbs: verbs, Namespaced: res.Namespaced, Why: "resource " + id})
	}
	return needs
}

// Rules folds needs into rules: one per API group and verb set, resources
// sorted, rules sorted by group then verbs.
func Rules(needs []Need) []Rule {
	var named []Rule
	verbs := map[schema.GroupResource]map[string]bool{}
	namespaced := map[schema.GroupResource]bool{}
	for _, n := range needs {
		gr := n.GVR.GroupResource()
		if n.Name != "" {
			named = append(named, Rule{Group: gr.Group, Resources: []string{gr.Resource}, Verbs: n.Verbs, ResourceNames: []string{n.Name}, Namespaced: n.Namespaced})
			continue
		}
		if verbs[gr] == nil {
			verbs[gr] = map[string]bool{}
			namespaced[gr] = true
		}
		for _, v := range n.Verbs {
			verbs[gr][v] = true
		}
		namespaced[gr] = namespaced[gr] && n.Namespaced
	}
	type key struct {
		group, verbs string
		namespaced   bool
	}
	byKey := map[key]*Rule{}
	var order []key
	for gr, vs := range verbs {
		list := orderedVerbs(vs)
		k := key{gr.Group, joinVerbs(list), namespaced[gr]}
		r, ok := byKey[k]
		if !ok {
			r = &Rule{Group: gr.Group, Verbs: list, Namespaced: namespaced[gr]}
			byKey[k] = r
			order = append(order, k)
		}
		r.Resources = append(r.Resources, gr.Resource)
	}
	out := make([]Rule, 0, len(order))
	for _, k := range order {
		r := byKey[k]
		slices.Sort(r.Resources)
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b Rule) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(joinVerbs(a.Verbs), joinVerbs(b.Verbs)), cmp.Compare(a.Resources[0], b.Resources[0]))
	})
	return append(out, named...)
}

// verbOrder is the order verbs are printed in.
var verbOrder = []string{"get", "list", "watch", "create", "update", "patch", "delete"}

func orderedVerbs(vs map[string]bool) []string {
	var out []string
	for _, v := range verbOrder {
		if vs[v] {
			out = append(out, v)
		}
	}
	return out
}

func joinVerbs(vs []string) string {
	s := ""
	for _, v := range vs {
		s += v + ","
	}
	return s
}

// AggregateLabel on a ClusterRole folds its rules into deploy/'s
// kroscope:graphs ClusterRole (bound to kroscope's ServiceAccount), by
// kube-controller-manager's ClusterRole aggregation.
const AggregateLabel = "kroscope.dev/aggregate-to-graphs"

// RoleName is the name of the ClusterRole that grants graph's rules.
func RoleName(graph string) string { return "kroscope:graph:" + graph }

// ClusterRole is the ClusterRole granting what serving g takes, labelled
// for aggregation into kroscope:graphs.
func ClusterRole(g *graph.Graph) *rbacv1.ClusterRole {
	cr := &rbacv1.ClusterRole{
		TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: RoleName(g.Name), Labels: map[string]string{AggregateLabel: "true"},
			Annotations: map[string]string{"kroscope.dev/graph": g.Name}},
	}
	for _, r := range Rules(ForGraph(g)) {
		cr.Rules = append(cr.Rules, rbacv1.PolicyRule{APIGroups: []string{r.Group}, Resources: r.Resources, Verbs: r.Verbs, ResourceNames: r.ResourceNames})
	}
	return cr
}

// ClusterRoleBinding binds RoleName(graph) to the ServiceAccount ns/name
// directly: for a cluster without ClusterRole aggregation, or to grant one
// graph only.
func ClusterRoleBinding(graph, ns, name string) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: RoleName(graph)},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: RoleName(graph)},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}},
	}
}
