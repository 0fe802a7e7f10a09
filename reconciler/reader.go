package reconciler

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Reader answers a reconcile's reads from what a watch has already seen, so
// a converging instance does not ask the API server for objects whose state
// is known. The engine implements it over its informers; without one every
// read is a request.
//
// A Reader must only answer when it knows the object's current state (as
// current as a watch can be): otherwise it returns ok false and the
// reconciler reads from the API server. Objects it returns are the caller's
// to change.
type Reader interface {
	// Instance returns the instance named, or ok false.
	Instance(gvr schema.GroupVersionResource, namespace, name string) (obj *unstructured.Unstructured, ok bool)
	// Child returns the managed child named, or ok false. A child that does
	// not exist is always ok false: proving absence needs the API server,
	// because an object without kroscope's labels is invisible to its
	// watches.
	Child(gvr schema.GroupVersionResource, namespace, name string) (obj *unstructured.Unstructured, ok bool)
	// Read tells the reader what the API server returned for a read.
	Read(gvr schema.GroupVersionResource, obj *unstructured.Unstructured)
	// Wrote tells the reader what the API server returned for a write based
	// on resourceVersion replaces ("" for a create).
	Wrote(gvr schema.GroupVersionResource, obj *unstructured.Unstructured, replaces string)
	// Stale tells the reader a write to the object was refused as a
	// conflict: what it knows may be older than the server's, so the next
	// read must ask the API server.
	Stale(gvr schema.GroupVersionResource, namespace, name string)
	// Forget drops what the reader knows of an object this reconcile deleted.
	Forget(gvr schema.GroupVersionResource, namespace, name string)
}

// reader returns the Reader this run may use: none when it impersonates a
// ServiceAccount, whose reads must be checked by the API server as that
// identity, and none in observe mode, which must show the cluster as it is.
func (r *run) reader() Reader {
	if r.sa != "" || r.opts.Observe {
		return nil
	}
	return r.opts.Reader
}

// instanceStale tells the Reader, if any, that a write to the instance was
// refused as a conflict.
func (r *run) instanceStale() {
	if rd := r.reader(); rd != nil {
		rd.Stale(r.c.gvr, r.req.Namespace, r.req.Name)
	}
}

// wrote passes what the API server returned for a write to the Reader, if
// any.
func (r *run) wrote(gvr schema.GroupVersionResource, obj *unstructured.Unstructured, replaces string) {
	if rd := r.reader(); rd != nil && obj != nil {
		rd.Wrote(gvr, obj, replaces)
	}
}
