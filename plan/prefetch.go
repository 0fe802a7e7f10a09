package plan

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
)

// prefetch holds the graph's managed children, listed once per kind
// before the instances are planned: the reconciler's reads of them are
// answered from here, as the engine answers them from its watches,
// instead of one GET per child per instance. A child not found here is
// read from the API server (absence needs its word).
type prefetch map[objKey]*unstructured.Unstructured

// prefetchChildren lists the objects of every kind g manages that carry
// an instance label, in namespace ("" every one). A kind the user may not
// list, or that is not served, is left to GETs.
func prefetchChildren(ctx context.Context, g *graph.Graph, set *client.Set, namespace string) prefetch {
	out := prefetch{}
	listed := map[schema.GroupVersionResource]bool{}
	for _, id := range g.TopologicalOrder {
		res := g.Resources[id]
		if res.External || listed[res.GVR] {
			continue
		}
		listed[res.GVR] = true
		ri := set.Dynamic().Resource(res.GVR)
		var list *unstructured.UnstructuredList
		var err error
		opts := metav1.ListOptions{LabelSelector: metadata.InstanceIDLabel}
		if res.Namespaced {
			list, err = ri.Namespace(namespace).List(ctx, opts)
		} else {
			list, err = ri.List(ctx, opts)
		}
		if err != nil {
			continue
		}
		for i := range list.Items {
			u := &list.Items[i]
			out[objKey{res.GVR, u.GetNamespace(), u.GetName()}] = u
		}
	}
	return out
}

// recCache is the reconciler's Reader for one instance's plan: the
// instance as the plan prepared it, the children from the prefetch. What
// it answers is what the recorder saw, so diffs start from it. Writes are
// dry runs: nothing is recorded.
type recCache struct {
	r   *recorder
	pre prefetch
}

func (c recCache) Instance(gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, bool) {
	return c.r.override(objKey{gvr, namespace, name})
}

func (c recCache) Child(gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, bool) {
	u, ok := c.pre[objKey{gvr, namespace, name}]
	if !ok {
		return nil, false
	}
	c.r.saw(gvr, u)
	return u.DeepCopy(), true
}

func (recCache) Read(schema.GroupVersionResource, *unstructured.Unstructured)          {}
func (recCache) Wrote(schema.GroupVersionResource, *unstructured.Unstructured, string) {}
func (recCache) Stale(schema.GroupVersionResource, string, string)                     {}
func (recCache) Forget(schema.GroupVersionResource, string, string)                    {}
