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
// read from the API server (absence needs its word), unless its kind
// was listed where it would be: then it is unseen, as a child the
// engine's watches do not show, and a create proves the name free.
type prefetch struct {
	objs map[objKey]*unstructured.Unstructured
	// listed are the kinds listed, each with the namespace listed ("" all).
	listed map[schema.GroupVersionResource]string
}

// prefetchChildren lists the objects of every kind g manages that carry
// an instance label, in namespace ("" every one). A kind the user may not
// list, or that is not served, is left to GETs.
func prefetchChildren(ctx context.Context, g *graph.Graph, set *client.Set, namespace string) prefetch {
	out := prefetch{objs: map[objKey]*unstructured.Unstructured{}, listed: map[schema.GroupVersionResource]string{}}
	tried := map[schema.GroupVersionResource]bool{}
	for _, id := range g.TopologicalOrder {
		res := g.Resources[id]
		if res.External || tried[res.GVR] {
			continue
		}
		tried[res.GVR] = true
		ri := set.Dynamic().Resource(res.GVR)
		var list *unstructured.UnstructuredList
		var err error
		opts := metav1.ListOptions{LabelSelector: metadata.InstanceIDLabel}
		listedNS := ""
		if res.Namespaced {
			list, err = ri.Namespace(namespace).List(ctx, opts)
			listedNS = namespace
		} else {
			list, err = ri.List(ctx, opts)
		}
		if err != nil {
			continue
		}
		out.listed[res.GVR] = listedNS
		for i := range list.Items {
			u := &list.Items[i]
			out.objs[objKey{res.GVR, u.GetNamespace(), u.GetName()}] = u
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
	u, ok := c.pre.objs[objKey{gvr, namespace, name}]
	if !ok {
		return nil, false
	}
	c.r.saw(gvr, u)
	return u.DeepCopy(), true
}

// Unseen: the kind was listed where the child would be, and it was not
// there.
func (c recCache) Unseen(gvr schema.GroupVersionResource, namespace, name string) bool {
	ns, listed := c.pre.listed[gvr]
	if !listed || (ns != "" && ns != namespace) {
		return false
	}
	_, found := c.pre.objs[objKey{gvr, namespace, name}]
	return !found
}

func (recCache) Read(schema.GroupVersionResource, *unstructured.Unstructured)          {}
func (recCache) Wrote(schema.GroupVersionResource, *unstructured.Unstructured, string) {}
func (recCache) Stale(schema.GroupVersionResource, string, string)                     {}
func (recCache) Forget(schema.GroupVersionResource, string, string)                    {}
