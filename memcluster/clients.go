package memcluster

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
)

// Dynamic returns a dynamic client over the cluster that never injects
// failures (the workload simulator and tests use it).
func (c *Cluster) Dynamic() dynamic.Interface { return dynClient{c} }

// Metadata returns a metadata-only client over the same objects.
func (c *Cluster) Metadata() metadata.Interface { return mdClient{c} }

type dynClient struct{ c *Cluster }

func (d dynClient) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return dynResource{c: d.c, gvr: gvr}
}

type dynResource struct {
	c   *Cluster
	gvr schema.GroupVersionResource
	ns  string
}

var _ dynamic.NamespaceableResourceInterface = dynResource{}

func (r dynResource) Namespace(ns string) dynamic.ResourceInterface {
	r.ns = ns
	return r
}

func oneSub(gvr schema.GroupVersionResource, subs []string) (string, error) {
	switch len(subs) {
	case 0:
		return "", nil
	case 1:
		return subs[0], nil
	}
	return "", apierrors.NewBadRequest(fmt.Sprintf("%s: nested subresources %v are not supported", gvr.Resource, subs))
}

func (r dynResource) Create(_ context.Context, obj *unstructured.Unstructured, opts metav1.CreateOptions, subs ...string) (*unstructured.Unstructured, error) {
	sub, err := oneSub(r.gvr, subs)
	if err != nil {
		return nil, err
	}
	return r.c.create(r.gvr, r.ns, obj, opts, sub)
}

func (r dynResource) Update(_ context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions, subs ...string) (*unstructured.Unstructured, error) {
	sub, err := oneSub(r.gvr, subs)
	if err != nil {
		return nil, err
	}
	return r.c.update(r.gvr, r.ns, obj, opts, sub)
}

func (r dynResource) UpdateStatus(_ context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions) (*unstructured.Unstructured, error) {
	return r.c.update(r.gvr, r.ns, obj, opts, "status")
}

func (r dynResource) Delete(_ context.Context, name string, opts metav1.DeleteOptions, subs ...string) error {
	if len(subs) > 0 {
		return apierrors.NewMethodNotSupported(r.gvr.GroupResource(), "delete "+subs[0])
	}
	return r.c.delete(r.gvr, r.ns, name, opts)
}

func (r dynResource) DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, listOpts metav1.ListOptions) error {
	list, err := r.c.list(r.gvr, r.ns, listOpts)
	if err != nil {
		return err
	}
	for _, item := range list.Items {
		if err := r.c.delete(r.gvr, item.GetNamespace(), item.GetName(), opts); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

func (r dynResource) Get(_ context.Context, name string, _ metav1.GetOptions, subs ...string) (*unstructured.Unstructured, error) {
	if _, err := oneSub(r.gvr, subs); err != nil {
		return nil, err
	}
	// A status subresource GET returns the whole object, as on a real server.
	return r.c.get(r.gvr, r.ns, name)
}

func (r dynResource) List(_ context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return r.c.list(r.gvr, r.ns, opts)
}

func (r dynResource) Watch(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return r.c.watch(r.gvr, r.ns, opts, func(u *unstructured.Unstructured) runtime.Object { return u })
}

func (r dynResource) Patch(_ context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subs ...string) (*unstructured.Unstructured, error) {
	sub, err := oneSub(r.gvr, subs)
	if err != nil {
		return nil, err
	}
	return r.c.patch(r.gvr, r.ns, name, pt, data, opts, sub)
}

func (r dynResource) Apply(_ context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions, subs ...string) (*unstructured.Unstructured, error) {
	sub, err := oneSub(r.gvr, subs)
	if err != nil {
		return nil, err
	}
	return r.c.apply(r.gvr, r.ns, name, obj.DeepCopy(), opts.ToPatchOptions(), sub)
}

func (r dynResource) ApplyStatus(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions) (*unstructured.Unstructured, error) {
	return r.Apply(ctx, name, obj, opts, "status")
}

// The metadata-only client: the same store, objects cut down to
// PartialObjectMetadata.

type mdClient struct{ c *Cluster }

func (m mdClient) Resource(gvr schema.GroupVersionResource) metadata.Getter {
	return mdResource{dyn: dynResource{c: m.c, gvr: gvr}}
}

type mdResource struct{ dyn dynResource }

var _ metadata.Getter = mdResource{}

func (m mdResource) Namespace(ns string) metadata.ResourceInterface {
	m.dyn.ns = ns
	return m
}

func toPartial(u *unstructured.Unstructured) *metav1.PartialObjectMetadata {
	p := &metav1.PartialObjectMetadata{}
	p.APIVersion = u.GetAPIVersion()
	p.Kind = u.GetKind()
	m, _ := u.Object["metadata"].(map[string]any)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &p.ObjectMeta); err != nil {
		// Metadata the cluster stored always converts; fall back to the
		// accessors so a bad field loses detail rather than the object.
		p.Name, p.Namespace, p.UID = u.GetName(), u.GetNamespace(), u.GetUID()
		p.ResourceVersion, p.Labels, p.Annotations = u.GetResourceVersion(), u.GetLabels(), u.GetAnnotations()
	}
	return p
}

func (m mdResource) Delete(ctx context.Context, name string, opts metav1.DeleteOptions, subs ...string) error {
	return m.dyn.Delete(ctx, name, opts, subs...)
}

func (m mdResource) DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, listOpts metav1.ListOptions) error {
	return m.dyn.DeleteCollection(ctx, opts, listOpts)
}

func (m mdResource) Get(ctx context.Context, name string, opts metav1.GetOptions, subs ...string) (*metav1.PartialObjectMetadata, error) {
	u, err := m.dyn.Get(ctx, name, opts, subs...)
	if err != nil {
		return nil, err
	}
	return toPartial(u), nil
}

func (m mdResource) List(ctx context.Context, opts metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
	ul, err := m.dyn.List(ctx, opts)
	if err != nil {
		return nil, err
	}
	out := &metav1.PartialObjectMetadataList{}
	out.APIVersion = "meta.k8s.io/v1"
	out.Kind = "PartialObjectMetadataList"
	out.ResourceVersion = ul.GetResourceVersion()
	for i := range ul.Items {
		out.Items = append(out.Items, *toPartial(&ul.Items[i]))
	}
	return out, nil
}

func (m mdResource) Watch(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return m.dyn.c.watch(m.dyn.gvr, m.dyn.ns, opts, func(u *unstructured.Unstructured) runtime.Object { return toPartial(u) })
}

func (m mdResource) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subs ...string) (*metav1.PartialObjectMetadata, error) {
	u, err := m.dyn.Patch(ctx, name, pt, data, opts, subs...)
	if err != nil {
		return nil, err
	}
	return toPartial(u), nil
}
