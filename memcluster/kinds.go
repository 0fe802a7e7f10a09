package memcluster

import (
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// kindInfo is what the cluster knows about one served resource.
type kindInfo struct {
	gvk        schema.GroupVersionKind
	gvr        schema.GroupVersionResource
	listKind   string
	namespaced bool
	// status is true when the kind has a status subresource: main-resource
	// writes keep the stored status and status writes change only status.
	status bool
	// schema is a custom resource's schema, which every write is pruned,
	// defaulted and validated against (admit); nil for built-in kinds.
	schema *crSchema
}

// builtinKinds are the kinds every demo cluster serves from the start, with
// the scope and status subresource they have on a real API server.
var builtinKinds = []kindInfo{
	core("", "v1", "ConfigMap", "configmaps", true, false),
	core("", "v1", "Secret", "secrets", true, false),
	core("", "v1", "Service", "services", true, true),
	core("", "v1", "ServiceAccount", "serviceaccounts", true, false),
	core("", "v1", "Namespace", "namespaces", false, true),
	core("", "v1", "Pod", "pods", true, true),
	core("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", true, true),
	core("", "v1", "PersistentVolume", "persistentvolumes", false, true),
	core("", "v1", "Endpoints", "endpoints", true, false),
	core("", "v1", "Event", "events", true, false),
	core("", "v1", "LimitRange", "limitranges", true, false),
	core("", "v1", "ResourceQuota", "resourcequotas", true, true),
	core("apps", "v1", "Deployment", "deployments", true, true),
	core("apps", "v1", "StatefulSet", "statefulsets", true, true),
	core("apps", "v1", "DaemonSet", "daemonsets", true, true),
	core("apps", "v1", "ReplicaSet", "replicasets", true, true),
	core("batch", "v1", "Job", "jobs", true, true),
	core("batch", "v1", "CronJob", "cronjobs", true, true),
	core("networking.k8s.io", "v1", "Ingress", "ingresses", true, true),
	core("networking.k8s.io", "v1", "IngressClass", "ingressclasses", false, false),
	core("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", true, false),
	core("autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", true, true),
	core("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", true, true),
	core("rbac.authorization.k8s.io", "v1", "Role", "roles", true, false),
	core("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", true, false),
	core("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", false, false),
	core("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", false, false),
	core("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", false, true),
	core("coordination.k8s.io", "v1", "Lease", "leases", true, false),
	core("events.k8s.io", "v1", "Event", "events", true, false),
	core("storage.k8s.io", "v1", "StorageClass", "storageclasses", false, false),
	core("kro.run", "v1alpha1", "ResourceGraphDefinition", "resourcegraphdefinitions", false, true),
}

func core(group, version, kind, plural string, namespaced, status bool) kindInfo {
	gv := schema.GroupVersion{Group: group, Version: version}
	return kindInfo{
		gvk:        gv.WithKind(kind),
		gvr:        gv.WithResource(plural),
		listKind:   kind + "List",
		namespaced: namespaced,
		status:     status,
	}
}

// secretGVK is the kind whose stringData admit folds into data.
var secretGVK = schema.GroupVersionKind{Version: "v1", Kind: "Secret"}

// crdGVR is where CustomResourceDefinitions live; writing one teaches the
// cluster a new kind.
var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// restMapper is a meta.ResettableRESTMapper that learns kinds as CRDs are
// written. meta.DefaultRESTMapper is not safe for concurrent Add and reads,
// hence the lock.
type restMapper struct {
	mu sync.RWMutex
	m  *meta.DefaultRESTMapper
	// versions are each group's versions, in the order served: a mapping
	// asked without a version tries them, as discovery's mapper does (the
	// default mapper knows no default versions, and found nothing).
	versions map[string][]string
}

var _ meta.ResettableRESTMapper = (*restMapper)(nil)

func newRESTMapper() *restMapper {
	return &restMapper{m: meta.NewDefaultRESTMapper(nil), versions: map[string][]string{}}
}

func (r *restMapper) add(k kindInfo) {
	r.mu.Lock()
	defer r.mu.Unlock()
	scope := meta.RESTScopeRoot
	if k.namespaced {
		scope = meta.RESTScopeNamespace
	}
	singular := k.gvr.GroupVersion().WithResource(lower(k.gvk.Kind))
	r.m.AddSpecific(k.gvk, k.gvr, singular, scope)
	if g := k.gvk.Group; !slices.Contains(r.versions[g], k.gvk.Version) {
		r.versions[g] = append(r.versions[g], k.gvk.Version)
	}
}

// orKnown is versions, or when none are given the group's served ones.
// Callers hold r.mu.
func (r *restMapper) orKnown(gk schema.GroupKind, versions []string) []string {
	if len(versions) > 0 {
		return versions
	}
	return r.versions[gk.Group]
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// locked calls f, a method of r.m (which is never replaced), on arg under
// the read lock: kinds are added to r.m as their CRDs are written.
func locked[A, T any](r *restMapper, f func(A) (T, error), arg A) (T, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return f(arg)
}

// Reset is a no-op: the mapper is always current, since the cluster teaches
// it every kind the moment its CRD is written.
func (r *restMapper) Reset() {}

func (r *restMapper) KindFor(resource schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	return locked(r, r.m.KindFor, resource)
}

func (r *restMapper) KindsFor(resource schema.GroupVersionResource) ([]schema.GroupVersionKind, error) {
	return locked(r, r.m.KindsFor, resource)
}

func (r *restMapper) ResourceFor(input schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	return locked(r, r.m.ResourceFor, input)
}

func (r *restMapper) ResourcesFor(input schema.GroupVersionResource) ([]schema.GroupVersionResource, error) {
	return locked(r, r.m.ResourcesFor, input)
}

func (r *restMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.m.RESTMapping(gk, r.orKnown(gk, versions)...)
}

func (r *restMapper) RESTMappings(gk schema.GroupKind, versions ...string) ([]*meta.RESTMapping, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.m.RESTMappings(gk, r.orKnown(gk, versions)...)
}

func (r *restMapper) ResourceSingularizer(resource string) (string, error) {
	return locked(r, r.m.ResourceSingularizer, resource)
}
