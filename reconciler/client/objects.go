package client

import (
	"context"
	"errors"
	"fmt"
	"maps"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kroscope/kroscope/reconciler/metadata"
)

// Cache answers reads from what a watch has already seen and is told what
// the API server returned for every read and write, so it knows which
// version of an object is current. The engine implements it over its
// informers (reconciler.Reader is this interface). Only Objects calls it.
//
// A Cache must only answer when it knows the object's current state (as
// current as a watch can be): otherwise it returns ok false and the caller
// asks the API server. Objects it returns are the caller's to change.
type Cache interface {
	// Instance returns the instance named, or ok false.
	Instance(gvr schema.GroupVersionResource, namespace, name string) (obj *unstructured.Unstructured, ok bool)
	// Child returns the managed child named, or ok false. A child that does
	// not exist is always ok false: proving absence needs the API server,
	// because an object without kroscope's labels is invisible to its
	// watches.
	Child(gvr schema.GroupVersionResource, namespace, name string) (obj *unstructured.Unstructured, ok bool)
	// Unseen reports whether the watches that would show the child, were
	// it kroscope's, are running and synced and show nothing at its name.
	// A child they do show, of which Child holds no current copy, is not
	// unseen: it exists, and must be read before it is judged.
	Unseen(gvr schema.GroupVersionResource, namespace, name string) bool
	// Read tells the cache what the API server returned for a read.
	Read(gvr schema.GroupVersionResource, obj *unstructured.Unstructured)
	// Wrote tells the cache what the API server returned for a write based
	// on resourceVersion replaces ("" for a create).
	Wrote(gvr schema.GroupVersionResource, obj *unstructured.Unstructured, replaces string)
	// Stale tells the cache a write to the object was refused as a
	// conflict: what it knows may be older than the server's, so the next
	// read must ask the API server.
	Stale(gvr schema.GroupVersionResource, namespace, name string)
	// Forget drops what the cache knows of an object that is gone.
	Forget(gvr schema.GroupVersionResource, namespace, name string)
}

// Objects is the one client through which a reconcile reads and writes the
// instance and its children, as controller-runtime's cache-backed client
// is: cached reads are answered from the Cache when it knows the object,
// every request goes to the API server through the Set, and the outcome of
// every request is recorded in the Cache here, so no caller has to
// remember to. A nil Cache means every read is a request.
type Objects struct {
	set   *Set
	cache Cache
}

// NewObjects reads and writes through set, keeping cache (may be nil)
// current.
func NewObjects(set *Set, cache Cache) *Objects {
	return &Objects{set: set, cache: cache}
}

// Set is the client set the requests go through (for what is not an
// object of the graph: Events, discovery).
func (o *Objects) Set() *Set { return o.set }

func (o *Objects) resource(gvr schema.GroupVersionResource, namespace string) dynamic.ResourceInterface {
	ri := o.set.Dynamic().Resource(gvr)
	if namespace == "" {
		return ri
	}
	return ri.Namespace(namespace)
}

// Instance reads an instance from the Cache when it knows it, else from
// the API server; (nil, nil) when it does not exist.
func (o *Objects) Instance(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	if o.cache != nil {
		if u, ok := o.cache.Instance(gvr, namespace, name); ok {
			return u, nil
		}
	}
	return o.read(ctx, gvr, namespace, name)
}

// Child reads a managed child from the Cache when it knows it, else from
// the API server; (nil, nil) when it does not exist.
func (o *Objects) Child(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	if o.cache != nil {
		if u, ok := o.cache.Child(gvr, namespace, name); ok {
			return u, nil
		}
	}
	return o.read(ctx, gvr, namespace, name)
}

// read asks the API server and records the answer: the object, or that
// there is none.
func (o *Objects) read(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	u, err := o.resource(gvr, namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		o.forget(gvr, namespace, name)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if o.cache != nil {
		o.cache.Read(gvr, u)
	}
	return u, nil
}

// KnownChild is what a writer needs to know of a managed child before it
// writes, when the Cache can tell without a request: its current object,
// or nil when the watches show nothing at its name (it may still exist
// without kroscope's labels: a writer proves which with Create, without a
// read). ok is false when a read must tell: the watches show an object the
// Cache holds no current copy of (a process that just started holds none
// of them: judging those absent cost every converged child a refused
// create and a re-apply on every start), or they cannot tell, or there is
// no Cache.
func (o *Objects) KnownChild(gvr schema.GroupVersionResource, namespace, name string) (u *unstructured.Unstructured, ok bool) {
	if o.cache == nil {
		return nil, false
	}
	if u, ok := o.cache.Child(gvr, namespace, name); ok {
		return u, true
	}
	return nil, o.cache.Unseen(gvr, namespace, name)
}

// ErrExists is Create's answer when an object already has the name.
var ErrExists = errors.New("an object of that name already exists")

// neverStored is a resourceVersion no stored object has: etcd's store
// starts at revision 1 and every write makes a later one, so no object
// was ever written at revision 1.
const neverStored = "1"

// Create server-side applies obj only where no object has its name, as a
// GET answered 404 followed by the apply would, in one request and without
// the race between the two. The body carries a resourceVersion no object
// can have: creating ignores it, while applying over an existing object
// must name that object's version, so the API server refuses with a
// conflict (returned as ErrExists, which wraps it). The version is not a
// field any manager owns: the object and its managedFields are those a
// plain apply makes. It records what the API server returned.
func (o *Objects) Create(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, opts metav1.ApplyOptions) (*unstructured.Unstructured, error) {
	// Copies of the two maps changed: obj stays the caller's as it was.
	body := &unstructured.Unstructured{Object: maps.Clone(obj.Object)}
	md, _ := obj.Object["metadata"].(map[string]any)
	md = maps.Clone(md)
	if md == nil {
		md = map[string]any{}
	}
	md["resourceVersion"] = neverStored
	body.Object["metadata"] = md
	out, err := o.resource(gvr, obj.GetNamespace()).Apply(ctx, obj.GetName(), body, opts)
	if apierrors.IsConflict(err) {
		return nil, fmt.Errorf("%w: %w", ErrExists, err)
	}
	if err != nil {
		return nil, err
	}
	if o.cache != nil {
		o.cache.Wrote(gvr, out, "")
	}
	return out, nil
}

// Get reads an object from the API server, never from the Cache, and
// records nothing: for objects the watches do not cover (external
// references, another graph's instances) and for checking that a deleted
// object is really gone. A missing object is a NotFound error.
func (o *Objects) Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	return o.resource(gvr, namespace).Get(ctx, name, metav1.GetOptions{})
}

// List lists from the API server ("" namespace: every namespace).
func (o *Objects) List(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return o.resource(gvr, namespace).List(ctx, opts)
}

// Apply server-side applies obj, which replaces the version replaces (""
// when obj does not exist yet), and records what the API server returned
// when it is a new version. A field-manager conflict is not a stale
// object (the caller decides whether to force), so it records nothing.
func (o *Objects) Apply(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, opts metav1.ApplyOptions, replaces string) (*unstructured.Unstructured, error) {
	out, err := o.resource(gvr, obj.GetNamespace()).Apply(ctx, obj.GetName(), obj, opts)
	if err != nil {
		return nil, err
	}
	if o.cache != nil && out.GetResourceVersion() != replaces {
		o.cache.Wrote(gvr, out, replaces)
	}
	return out, nil
}

// Patch sends a merge patch of the object (or of its subresource) that
// replaces the version replaces, as kroscope's field manager, and records the outcome: the object
// returned, a conflict (what the Cache knows is stale), or that the object
// is gone.
func (o *Objects) Patch(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, body []byte, replaces string, subresource ...string) (*unstructured.Unstructured, error) {
	out, err := o.resource(gvr, namespace).Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{FieldManager: metadata.FieldManager}, subresource...)
	o.recordWrite(gvr, namespace, name, err)
	if err != nil {
		return nil, err
	}
	if o.cache != nil {
		o.cache.Wrote(gvr, out, replaces)
	}
	return out, nil
}

// Delete deletes the object and records that it is going: a deleted
// object, or one already gone, is forgotten; a conflict (a precondition
// failed: another object stands there now) makes what is known stale.
func (o *Objects) Delete(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, opts metav1.DeleteOptions) error {
	err := o.resource(gvr, namespace).Delete(ctx, name, opts)
	if err == nil {
		o.forget(gvr, namespace, name)
	}
	o.recordWrite(gvr, namespace, name, err)
	return err
}

// recordWrite records what a failed write says about the object.
func (o *Objects) recordWrite(gvr schema.GroupVersionResource, namespace, name string, err error) {
	switch {
	case o.cache == nil || err == nil:
	case apierrors.IsConflict(err):
		o.cache.Stale(gvr, namespace, name)
	case apierrors.IsNotFound(err):
		o.cache.Forget(gvr, namespace, name)
	}
}

func (o *Objects) forget(gvr schema.GroupVersionResource, namespace, name string) {
	if o.cache != nil {
		o.cache.Forget(gvr, namespace, name)
	}
}
