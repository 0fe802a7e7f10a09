package reconciler

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/graph"
)

// kinds maps the graph's kinds to the API server's resources through the
// controller's REST mapper (it knows the real plural and scope); without
// one, the graph's guesses stand.
type kinds struct {
	set *client.Set
	g   *graph.Graph
}

// resolve maps the resource's kind, refreshing discovery once for a kind
// the mapper does not know yet.
func (k kinds) resolve(res *graph.Resource) (schema.GroupVersionResource, bool, error) {
	m := k.set.RESTMapper()
	if m == nil {
		return res.GVR, res.Namespaced, nil
	}
	mapping, err := m.RESTMapping(res.GVK.GroupKind(), res.GVK.Version)
	if meta.IsNoMatchError(err) {
		// A kind installed after the mapper cached discovery: look again once.
		m.Reset()
		mapping, err = m.RESTMapping(res.GVK.GroupKind(), res.GVK.Version)
	}
	if err != nil {
		if meta.IsNoMatchError(err) {
			return schema.GroupVersionResource{}, false, fmt.Errorf("resource %s: kind %s is not served by the API server", res.ID, res.GVK)
		}
		return res.GVR, res.Namespaced, nil
	}
	return mapping.Resource, mapping.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

// cached maps an excluded resource's kind with what the REST mapper
// already knows, without refreshing discovery; served is false when the
// kind is not served.
func (k kinds) cached(res *graph.Resource) (gvr schema.GroupVersionResource, served bool, err error) {
	m := k.set.RESTMapper()
	if m == nil {
		return res.GVR, true, nil
	}
	mapping, err := m.RESTMapping(res.GVK.GroupKind(), res.GVK.Version)
	if meta.IsNoMatchError(err) {
		return schema.GroupVersionResource{}, false, nil
	}
	if err != nil {
		return res.GVR, true, nil
	}
	return mapping.Resource, true, nil
}

// groupKind finds the resource of a group-kind an inventory records; an
// empty GVR when the kind is not served (its objects are gone with it).
func (k kinds) groupKind(gk schema.GroupKind) (schema.GroupVersionResource, bool, error) {
	for _, id := range k.g.TopologicalOrder {
		if res := k.g.Resources[id]; res.GVK.GroupKind() == gk {
			gvr, namespaced, err := k.resolve(res)
			if err != nil && strings.Contains(err.Error(), "is not served") {
				return schema.GroupVersionResource{}, false, nil
			}
			return gvr, namespaced, err
		}
	}
	m := k.set.RESTMapper()
	if m == nil {
		return schema.GroupVersionResource{}, false, fmt.Errorf("no REST mapper to find the kind %s recorded in the inventory", gk)
	}
	mapping, err := m.RESTMapping(gk)
	if meta.IsNoMatchError(err) {
		m.Reset()
		mapping, err = m.RESTMapping(gk)
	}
	if meta.IsNoMatchError(err) {
		return schema.GroupVersionResource{}, false, nil
	}
	if err != nil {
		return schema.GroupVersionResource{}, false, fmt.Errorf("mapping %s recorded in the inventory: %w", gk, err)
	}
	return mapping.Resource, mapping.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

// instanceKind maps the kind an instance label names (its parent's), with
// what the mapper knows: ok is false when there is no mapper or the kind
// is no longer served.
func (k kinds) instanceKind(gvk schema.GroupVersionKind) (schema.GroupVersionResource, bool) {
	m := k.set.RESTMapper()
	if m == nil {
		return schema.GroupVersionResource{}, false
	}
	mapping, err := m.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return schema.GroupVersionResource{}, false
	}
	return mapping.Resource, true
}
