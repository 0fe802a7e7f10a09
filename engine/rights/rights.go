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

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kroscope/kroscope/reconciler/graph"
)

// Verb lists, in the order `kubectl create role` prints them.
var (
	ChildVerbs    = []string{"get", "list", "watch", "create", "patch", "delete"}
	ReadVerbs     = []string{"get", "list", "watch"}
	InstanceVerbs = []string{"get", "list", "watch", "patch"}
	StatusVerbs   = []string{"patch"}
)

// Rule is one RBAC policy rule: verbs on resources (plurals, maybe with a
// subresource) of one API group.
type Rule struct {
	Group     string
	Resources []string
	Verbs     []string
	// Namespaced: every resource of the rule is namespaced (a RoleBinding
	// in a namespace could grant it there).
	Namespaced bool
}

// Need is one resource and the verbs a graph needs on it.
type Need struct {
	GVR        schema.GroupVersionResource
	Verbs      []string
	Namespaced bool
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
	verbs := map[schema.GroupResource]map[string]bool{}
	namespaced := map[schema.GroupResource]bool{}
	for _, n := range needs {
		gr := n.GVR.GroupResource()
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
	return out
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
