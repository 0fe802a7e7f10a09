// Package confine decides where a graph's child may be written (or an
// external reference read): one pure function, Decide, of the facts about
// the child, its instance and what a cluster admin granted. The reconciler
// asks it before every write of a rendered child, the engine before it
// serves a graph; `kroscope validate` and `kroscope rbac` ask the same.
//
// The threat model (docs/security.md): whoever writes a graph (a
// ResourceGraphDefinition, cluster-scoped) is a cluster admin and trusted;
// whoever writes an instance is not. So what an instance's spec decides
// must stay inside the instance's namespace, and the kinds that grant
// power over the cluster itself are never a child unless a flag says so.
package confine

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ScopeAnnotation on a ResourceGraphDefinition, set to ScopeCluster, lets
// the children of its namespaced instances land in any namespace, their
// namespace taken from the instance's spec included, and be cluster-scoped
// (a Namespace, say). Only who can write the graph can set it.
const ScopeAnnotation = "kroscope.dev/children-scope"

// ScopeCluster is the one value of ScopeAnnotation that widens anything.
const ScopeCluster = "Cluster"

// Grant is what a cluster admin allowed beyond the default.
type Grant struct {
	// AnyNamespace: the graph carries ScopeAnnotation: Cluster.
	AnyNamespace bool
	// Kinds are the sensitive kinds a flag (--allow-child-kind) allows.
	Kinds []schema.GroupKind
}

// Facts are everything the decision rests on. Rendered is false when the
// graph is checked before any instance exists: only what the graph alone
// decides (the kind, the scope) is judged.
type Facts struct {
	Kind schema.GroupKind
	// External: read (an externalRef), never written.
	External bool
	// Namespaced: the child's kind is namespaced.
	Namespaced bool
	// InstanceNamespaced: the graph's instances are namespaced;
	// InstanceNamespace the instance's namespace once rendered.
	InstanceNamespaced bool
	InstanceNamespace  string
	// Rendered: Namespace is the child's rendered namespace (after the
	// instance's was filled in for an empty one).
	Rendered  bool
	Namespace string
	// LiteralNamespace: the graph writes the child's namespace as a
	// literal (no ${...}): the graph's author chose it.
	LiteralNamespace bool
	Grant            Grant
}

// Verdict is the decision; Why says why not, naming the child's kind,
// where it asked to be and what would allow it.
type Verdict struct {
	Allowed bool
	Why     string
}

// Decide is the one place that decides whether a child may be written (or
// read) where it asks.
func Decide(f Facts) Verdict {
	if !f.External {
		if why := sensitive(f.Kind); why != "" && !slices.Contains(f.Grant.Kinds, f.Kind) {
			return Verdict{Why: fmt.Sprintf("%s is %s, refused as a graph's child (kroscope --allow-child-kind=%s allows it)", kindName(f.Kind), why, FlagValue(f.Kind))}
		}
	}
	if !f.InstanceNamespaced || f.Grant.AnyNamespace {
		return Verdict{Allowed: true}
	}
	if !f.Namespaced && !f.External {
		return Verdict{Why: fmt.Sprintf("%s is cluster-scoped and the graph's instances are namespaced: a namespaced instance's children stay in its namespace (the graph's annotation %s: %s allows it)", kindName(f.Kind), ScopeAnnotation, ScopeCluster)}
	}
	if !f.Rendered || !f.Namespaced || f.LiteralNamespace || f.Namespace == f.InstanceNamespace {
		return Verdict{Allowed: true}
	}
	verb := "written into"
	if f.External {
		verb = "read from"
	}
	where := "namespace " + f.Namespace
	if f.Namespace == "" {
		where = "every namespace"
	}
	return Verdict{Why: fmt.Sprintf("%s would be %s %s, not the instance's namespace %s: a namespace that is not the instance's must be written in the graph, not computed (the graph's annotation %s: %s allows it)",
		kindName(f.Kind), verb, where, f.InstanceNamespace, ScopeAnnotation, ScopeCluster)}
}

// sensitiveGroups are API groups every kind of which grants power over the
// cluster itself: who can write them can read every Secret, intercept
// every request or serve an API.
var sensitiveGroups = map[string]string{
	"rbac.authorization.k8s.io":    "an RBAC object (it grants rights)",
	"admissionregistration.k8s.io": "an admission control object (it sees or changes every request it matches)",
	"apiregistration.k8s.io":       "an APIService (it routes a whole API to a server of its choosing)",
	"flowcontrol.apiserver.k8s.io": "an API priority and fairness object (it can starve the API server's clients)",
	"internal.kro.run":             "kro's internal state",
}

// sensitiveKinds are single kinds of that kind.
var sensitiveKinds = map[schema.GroupKind]string{
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: "a CustomResourceDefinition (it defines, or redefines, an API)",
	{Group: "kro.run", Kind: "ResourceGraphDefinition"}:               "a graph (only a cluster admin writes graphs)",
	{Group: "kro.run", Kind: "ResourceGroup"}:                         "a graph (only a cluster admin writes graphs)",
}

// sensitive says what makes gk sensitive, "" when it is not.
func sensitive(gk schema.GroupKind) string {
	if why, ok := sensitiveKinds[gk]; ok {
		return why
	}
	return sensitiveGroups[gk.Group]
}

// Sensitive reports whether gk is refused as a child unless a flag allows it.
func Sensitive(gk schema.GroupKind) bool { return sensitive(gk) != "" }

// FlagValue is gk as --allow-child-kind takes it: Kind.group (Kind for the
// core group).
func FlagValue(gk schema.GroupKind) string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Kind + "." + gk.Group
}

// ParseKinds reads --allow-child-kind values (Kind.group, Kind for the core
// group).
func ParseKinds(vals []string) ([]schema.GroupKind, error) {
	var out []schema.GroupKind
	for _, v := range vals {
		v = strings.TrimSpace(v)
		gk := schema.ParseGroupKind(v)
		if gk.Kind == "" || strings.ContainsAny(gk.Kind, "/ ") {
			return nil, fmt.Errorf("--allow-child-kind %q: want Kind.group, e.g. ClusterRole.rbac.authorization.k8s.io", v)
		}
		out = append(out, gk)
	}
	return out, nil
}

func kindName(gk schema.GroupKind) string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Kind + " (" + gk.Group + ")"
}
