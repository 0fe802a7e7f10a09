package plan

import (
	"context"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"

	"github.com/kroscope/kroscope/reconciler/redact"
)

// dryRun is every write a plan sends: the API server runs admission,
// defaulting and validation, and stores nothing.
var dryRun = []string{metav1.DryRunAll}

// objKey names one object.
type objKey struct {
	gvr       schema.GroupVersionResource
	namespace string
	name      string
}

// write is one write the reconciler asked for, as the API server answered
// its dry run.
type write struct {
	verb  string // apply, patch, delete, create, update
	key   objKey
	after *unstructured.Unstructured // apply: what the server would store
	sent  *unstructured.Unstructured // apply: what the reconciler sent
	err   error
	// clientSide says why this write's outcome was computed here (the dry
	// run was forbidden).
	clientSide string
}

// recorder is a dynamic client that sends every write as a dry run and
// remembers what reads returned and what each write would do. The
// reconciler runs over it unchanged: it cannot write, whatever it does.
type recorder struct {
	inner dynamic.Interface
	*recState
}

// recState is what a recorder remembers, shared by the recorders of one
// instance's plan (its own identity's and impersonated ones).
type recState struct {
	// overrides are objects read from here instead of the API server: an
	// instance as a file edits it, or as the new schema defaults it.
	overrides map[objKey]*unstructured.Unstructured

	mu     sync.Mutex
	live   map[objKey]*unstructured.Unstructured // what reads returned
	writes []write
	// red learns every Secret value read or written.
	red redact.Set
}

func newRecorder(inner dynamic.Interface) *recorder {
	return &recorder{inner: inner, recState: &recState{overrides: map[objKey]*unstructured.Unstructured{}, live: map[objKey]*unstructured.Unstructured{}}}
}

// Resource implements dynamic.Interface.
func (r *recorder) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return &recResource{r: r, gvr: gvr, ri: r.inner.Resource(gvr)}
}

func (r *recorder) saw(gvr schema.GroupVersionResource, u *unstructured.Unstructured) {
	r.red.AddSecret(u.Object)
	r.mu.Lock()
	r.live[objKey{gvr, u.GetNamespace(), u.GetName()}] = u.DeepCopy()
	r.mu.Unlock()
}

func (r *recorder) record(w write) {
	if w.sent != nil {
		r.red.AddSecret(w.sent.Object)
	}
	r.mu.Lock()
	r.writes = append(r.writes, w)
	r.mu.Unlock()
}

// override is a copy of the object overriding k, if any. Overrides
// change (the reconciler patches the instance) while resources read.
func (r *recorder) override(k objKey) (*unstructured.Unstructured, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	u, ok := r.overrides[k]
	if !ok {
		return nil, false
	}
	return u.DeepCopy(), true
}

// patchOverride applies a merge patch to an overridden object and keeps
// the result as the override.
func (r *recorder) patchOverride(k objKey, u *unstructured.Unstructured, patch []byte) (*unstructured.Unstructured, error) {
	orig, err := u.MarshalJSON()
	if err != nil {
		return nil, err
	}
	merged, err := jsonpatch.MergePatch(orig, patch)
	if err != nil {
		return nil, fmt.Errorf("patching %s: %w", k.name, err)
	}
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON(merged); err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.overrides[k] = out
	r.mu.Unlock()
	return out.DeepCopy(), nil
}

// current is the object as the reconciler last read it: an override or
// what the API server returned (nil when neither).
func (r *recorder) current(k objKey) *unstructured.Unstructured {
	if u, ok := r.override(k); ok {
		return u
	}
	if u := r.liveObject(k); u != nil {
		return u.DeepCopy()
	}
	return nil
}

func (r *recorder) liveObject(k objKey) *unstructured.Unstructured {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.live[k]
}

// recResource is one resource (and maybe namespace) of a recorder.
type recResource struct {
	r   *recorder
	gvr schema.GroupVersionResource
	ns  string
	ri  dynamic.ResourceInterface
}

func (x *recResource) Namespace(ns string) dynamic.ResourceInterface {
	return &recResource{r: x.r, gvr: x.gvr, ns: ns, ri: x.r.inner.Resource(x.gvr).Namespace(ns)}
}

func (x *recResource) key(name string) objKey { return objKey{x.gvr, x.ns, name} }

func (x *recResource) Get(ctx context.Context, name string, o metav1.GetOptions, sub ...string) (*unstructured.Unstructured, error) {
	if u, ok := x.r.override(x.key(name)); ok && len(sub) == 0 {
		return u, nil
	}
	u, err := x.ri.Get(ctx, name, o, sub...)
	if err == nil && len(sub) == 0 {
		x.r.saw(x.gvr, u)
	}
	return u, err
}

func (x *recResource) List(ctx context.Context, o metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	l, err := x.ri.List(ctx, o)
	if err == nil {
		for i := range l.Items {
			x.r.saw(x.gvr, &l.Items[i])
		}
	}
	return l, err
}

func (x *recResource) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return nil, errors.New("a plan does not watch")
}

func (x *recResource) Apply(ctx context.Context, name string, obj *unstructured.Unstructured, o metav1.ApplyOptions, sub ...string) (*unstructured.Unstructured, error) {
	o.DryRun = dryRun
	out, err := x.ri.Apply(ctx, name, obj, o, sub...)
	w := write{verb: "apply", key: x.key(name), sent: obj.DeepCopy(), after: out, err: err}
	if apierrors.IsForbidden(err) && len(sub) == 0 {
		// The API server authorizes a dry run as the write itself: this
		// user may read but not write the kind. Say what the apply would
		// change as far as this side can tell.
		out, err = clientSideApply(x.r.liveObject(w.key), obj), nil
		w.after, w.err, w.clientSide = out, nil, "no permission to write "+x.gvr.Resource+" (dry run forbidden): diff computed client-side, without the API server's defaults and admission"
	}
	x.r.record(w)
	return out, err
}

func (x *recResource) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, o metav1.PatchOptions, sub ...string) (*unstructured.Unstructured, error) {
	if u, ok := x.r.override(x.key(name)); ok && pt == types.MergePatchType {
		// The instance as the plan prepared it (an edit, new defaults):
		// the reconciler's bookkeeping patches it here, so what it reads
		// next is still that instance, not the stored one.
		return x.r.patchOverride(x.key(name), u, data)
	}
	if len(sub) == 1 && sub[0] == "status" {
		// The instance's status is the reconciler's report, which a plan
		// never shows: not worth a request per instance.
		if cur := x.r.current(x.key(name)); cur != nil {
			return cur, nil
		}
	}
	o.DryRun = dryRun
	out, err := x.ri.Patch(ctx, name, pt, data, o, sub...)
	w := write{verb: "patch", key: x.key(name), err: err}
	if apierrors.IsForbidden(err) {
		// The reconciler's bookkeeping on the instance (finalizer,
		// inventory, status) that this user may not write: the plan goes
		// on with the instance as it is.
		if cur := x.r.current(w.key); cur != nil {
			out, err, w.err, w.clientSide = cur, nil, nil, "no permission to write "+x.gvr.Resource+": not sent"
		}
	}
	x.r.record(w)
	return out, err
}

func (x *recResource) Delete(ctx context.Context, name string, o metav1.DeleteOptions, sub ...string) error {
	o.DryRun = dryRun
	err := x.ri.Delete(ctx, name, o, sub...)
	w := write{verb: "delete", key: x.key(name), err: err}
	if apierrors.IsForbidden(err) {
		w.err, w.clientSide = nil, "no permission to delete "+x.gvr.Resource+" (dry run forbidden): the inventory lists it for pruning"
		err = nil
	}
	x.r.record(w)
	return err
}

func (x *recResource) Create(ctx context.Context, obj *unstructured.Unstructured, o metav1.CreateOptions, sub ...string) (*unstructured.Unstructured, error) {
	o.DryRun = dryRun
	out, err := x.ri.Create(ctx, obj, o, sub...)
	x.r.record(write{verb: "create", key: x.key(obj.GetName()), err: err})
	return out, err
}

func (x *recResource) Update(ctx context.Context, obj *unstructured.Unstructured, o metav1.UpdateOptions, sub ...string) (*unstructured.Unstructured, error) {
	o.DryRun = dryRun
	out, err := x.ri.Update(ctx, obj, o, sub...)
	x.r.record(write{verb: "update", key: x.key(obj.GetName()), err: err})
	return out, err
}

func (x *recResource) UpdateStatus(ctx context.Context, obj *unstructured.Unstructured, o metav1.UpdateOptions) (*unstructured.Unstructured, error) {
	return x.Update(ctx, obj, o, "status")
}

func (x *recResource) ApplyStatus(ctx context.Context, name string, obj *unstructured.Unstructured, o metav1.ApplyOptions) (*unstructured.Unstructured, error) {
	o.DryRun = dryRun
	out, err := x.ri.ApplyStatus(ctx, name, obj, o)
	x.r.record(write{verb: "patch", key: x.key(name), err: err})
	return out, err
}

func (x *recResource) DeleteCollection(context.Context, metav1.DeleteOptions, metav1.ListOptions) error {
	return fmt.Errorf("a plan does not delete collections of %s", x.gvr.Resource)
}

// clientSideApply is what applying sent over live would leave, computed
// here: live's fields with sent's set over them (maps merged, every other
// value replaced). Without live it is sent itself.
func clientSideApply(live, sent *unstructured.Unstructured) *unstructured.Unstructured {
	if live == nil {
		return sent.DeepCopy()
	}
	out := live.DeepCopy()
	mergeInto(out.Object, runtime.DeepCopyJSON(sent.Object))
	return out
}

func mergeInto(dst, src map[string]any) {
	for k, v := range src {
		sm, sIsMap := v.(map[string]any)
		dm, dIsMap := dst[k].(map[string]any)
		if sIsMap && dIsMap {
			mergeInto(dm, sm)
			continue
		}
		dst[k] = v
	}
}
