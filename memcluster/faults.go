package memcluster

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// faultyDynamic fails a fraction of child writes with a 500 or a conflict so
// the demo shows ERROR states, retries and backoff. Reads never fail, and
// neither do writes to the kinds the engine itself needs to start (CRDs,
// graphs, instances, leases, events): only the reconciler's children.
type faultyDynamic struct {
	inner dynamic.Interface
	c     *Cluster
}

func (f *faultyDynamic) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return faultyResource{NamespaceableResourceInterface: f.inner.Resource(gvr), c: f.c, gvr: gvr}
}

// exempt lists the groups whose writes never fail.
var exempt = map[string]bool{
	"apiextensions.k8s.io": true,
	"kro.run":              true,
	"coordination.k8s.io":  true,
	"events.k8s.io":        true,
}

// fail decides whether this write fails, and how. A dry run never does: a
// plan would show the injected failure as what the change would do.
func (c *Cluster) fail(gvr schema.GroupVersionResource, verb, name string, dryRun []string) error {
	if c.failRate <= 0 || len(dryRun) > 0 || exempt[gvr.Group] || (gvr.Group == "" && gvr.Resource == "events") {
		return nil
	}
	c.rndMu.Lock()
	roll, kind := c.rnd.Float64(), c.rnd.Intn(2)
	c.rndMu.Unlock()
	if roll >= c.failRate {
		return nil
	}
	if kind == 0 {
		return apierrors.NewInternalError(fmt.Errorf("injected failure (--fail-rate) on %s of %s %q", verb, gvr.GroupResource(), name))
	}
	return apierrors.NewConflict(gvr.GroupResource(), name, fmt.Errorf("injected conflict (--fail-rate) on %s", verb))
}

type faultyResource struct {
	dynamic.NamespaceableResourceInterface
	c   *Cluster
	gvr schema.GroupVersionResource
}

// with is ri, a namespace of r or r itself (a cluster-scoped resource, or
// every namespace), with r's writes failing as a namespace's do.
func (r faultyResource) with(ri dynamic.ResourceInterface) faultyNamespaced {
	return faultyNamespaced{ResourceInterface: ri, c: r.c, gvr: r.gvr}
}

func (r faultyResource) Namespace(ns string) dynamic.ResourceInterface {
	return r.with(r.NamespaceableResourceInterface.Namespace(ns))
}

func (r faultyResource) Create(ctx context.Context, obj *unstructured.Unstructured, opts metav1.CreateOptions, subs ...string) (*unstructured.Unstructured, error) {
	return r.with(r.NamespaceableResourceInterface).Create(ctx, obj, opts, subs...)
}

func (r faultyResource) Update(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions, subs ...string) (*unstructured.Unstructured, error) {
	return r.with(r.NamespaceableResourceInterface).Update(ctx, obj, opts, subs...)
}

func (r faultyResource) Delete(ctx context.Context, name string, opts metav1.DeleteOptions, subs ...string) error {
	return r.with(r.NamespaceableResourceInterface).Delete(ctx, name, opts, subs...)
}

func (r faultyResource) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subs ...string) (*unstructured.Unstructured, error) {
	return r.with(r.NamespaceableResourceInterface).Patch(ctx, name, pt, data, opts, subs...)
}

func (r faultyResource) Apply(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions, subs ...string) (*unstructured.Unstructured, error) {
	return r.with(r.NamespaceableResourceInterface).Apply(ctx, name, obj, opts, subs...)
}

type faultyNamespaced struct {
	dynamic.ResourceInterface
	c   *Cluster
	gvr schema.GroupVersionResource
}

func (r faultyNamespaced) Create(ctx context.Context, obj *unstructured.Unstructured, opts metav1.CreateOptions, subs ...string) (*unstructured.Unstructured, error) {
	if err := r.c.fail(r.gvr, "create", obj.GetName(), opts.DryRun); err != nil {
		return nil, err
	}
	return r.ResourceInterface.Create(ctx, obj, opts, subs...)
}

func (r faultyNamespaced) Update(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions, subs ...string) (*unstructured.Unstructured, error) {
	if err := r.c.fail(r.gvr, "update", obj.GetName(), opts.DryRun); err != nil {
		return nil, err
	}
	return r.ResourceInterface.Update(ctx, obj, opts, subs...)
}

func (r faultyNamespaced) Delete(ctx context.Context, name string, opts metav1.DeleteOptions, subs ...string) error {
	if err := r.c.fail(r.gvr, "delete", name, opts.DryRun); err != nil {
		return err
	}
	return r.ResourceInterface.Delete(ctx, name, opts, subs...)
}

func (r faultyNamespaced) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subs ...string) (*unstructured.Unstructured, error) {
	if err := r.c.fail(r.gvr, "patch", name, opts.DryRun); err != nil {
		return nil, err
	}
	return r.ResourceInterface.Patch(ctx, name, pt, data, opts, subs...)
}

func (r faultyNamespaced) Apply(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions, subs ...string) (*unstructured.Unstructured, error) {
	if err := r.c.fail(r.gvr, "apply", name, opts.DryRun); err != nil {
		return nil, err
	}
	return r.ResourceInterface.Apply(ctx, name, obj, opts, subs...)
}
