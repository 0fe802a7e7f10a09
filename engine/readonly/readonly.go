// Package readonly enforces observe mode: a Gate that, while closed, makes
// every write to the API server fail before it leaves the process. It wraps a
// rest.Config's transport (every client built from it) or, for client sets
// built without a config (the demo cluster), the dynamic and metadata clients.
package readonly

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
)

// Gate says whether writes are allowed. The zero Gate refuses writes.
type Gate struct {
	open atomic.Bool
	// fence, when set, must also hold for a write to pass: the Lease
	// holder's proof that it still holds the Lease (lease.Fence), asked
	// at each write, so the gate closes the moment the proof lapses.
	fence atomic.Pointer[Fence]
}

// Fence is a proof that may lapse by itself.
type Fence interface{ Valid() bool }

// NewGate returns a gate, open (writable) or not.
func NewGate(open bool) *Gate {
	g := &Gate{}
	g.open.Store(open)
	return g
}

// Open reports whether writes are allowed: the gate is set open and its
// fence, if any, holds now.
func (g *Gate) Open() bool {
	if !g.open.Load() {
		return false
	}
	f := g.fence.Load()
	return f == nil || (*f).Valid()
}

// fenceUntil is when the fence's proof lapses, when it says (see Until).
func (g *Gate) fenceUntil() (time.Time, bool) {
	f := g.fence.Load()
	if f == nil {
		return time.Time{}, false
	}
	u, ok := (*f).(interface{ Until() time.Time })
	if !ok {
		return time.Time{}, false
	}
	until := u.Until()
	return until, !until.IsZero()
}

// SetFence makes every write also wait on f (nil: no fence).
func (g *Gate) SetFence(f Fence) {
	if f == nil {
		g.fence.Store(nil)
		return
	}
	g.fence.Store(&f)
}

// Set opens or closes the gate.
func (g *Gate) Set(open bool) { g.open.Store(open) }

// Error is returned for every refused write.
type Error struct {
	Verb string
	What string
	// Fenced: the gate was open but the Lease holder's proof had lapsed.
	Fenced bool
}

func (e *Error) Error() string {
	if e.Fenced {
		return fmt.Sprintf("kroscope cannot prove it still holds the lease: refused %s %s (the lease's next holder writes it)", e.Verb, e.What)
	}
	return fmt.Sprintf("kroscope is observing (read-only): refused %s %s", e.Verb, e.What)
}

// refuse returns the error for a write refused now (nil: it may pass).
func (g *Gate) refuse(ctx context.Context, verb, what string) error {
	if g.Open() || userAllowed(ctx, verb) {
		return nil
	}
	return &Error{Verb: verb, What: what, Fenced: g.open.Load()}
}

// IsReadOnly reports whether err is (or wraps) a refused write.
func IsReadOnly(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// userWriteKey marks a context whose request is a user's own action.
type userWriteKey struct{}

// UserWrite returns a context whose PATCH and DELETE requests pass a closed
// gate: an attached kroscope observes, but the user's requeue (an
// annotation patch) and delete still reach the cluster. Nothing else the
// engine does runs under such a context, so every other write stays refused.
func UserWrite(ctx context.Context) context.Context {
	return context.WithValue(ctx, userWriteKey{}, true)
}

// userAllowed reports whether ctx carries UserWrite and verb is one of the
// two user writes (HTTP method or client verb, any case).
func userAllowed(ctx context.Context, verb string) bool {
	if ctx == nil || ctx.Value(userWriteKey{}) == nil {
		return false
	}
	switch verb {
	case http.MethodPatch, http.MethodDelete, "patch", "delete":
		return true
	}
	return false
}

// readVerbs are the HTTP methods that never change anything (LIST and WATCH
// are GETs).
var readVerbs = map[string]bool{http.MethodGet: true, http.MethodHead: true, http.MethodOptions: true}

// RoundTripper refuses non-read requests while the gate is closed.
func RoundTripper(g *Gate, next http.RoundTripper) http.RoundTripper {
	return &roundTripper{gate: g, next: next}
}

type roundTripper struct {
	gate *Gate
	next http.RoundTripper
	// gated carries the engine's own writes over connections that ask
	// the gate again before each send (see gatedTransport); nil: next.
	gated http.RoundTripper
}

func (r *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if readVerbs[req.Method] {
		return r.next.RoundTrip(req)
	}
	if err := r.gate.refuse(req.Context(), req.Method, req.URL.Path); err != nil {
		return nil, err
	}
	if userAllowed(req.Context(), req.Method) {
		return r.next.RoundTrip(req)
	}
	next := r.next
	if r.gated != nil {
		next = r.gated
	}
	ctx, cancel := r.writeContext(req.Context())
	resp, err := next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		if !r.gate.Open() { // refused on its way out, or lost as the gate closed
			return nil, &Error{Verb: req.Method, What: req.URL.Path, Fenced: r.gate.open.Load()}
		}
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// writeContext gives a write that passed the gate the proof's expiry as
// its deadline: one still waiting for the connection when the proof
// lapses is abandoned, not sent late.
func (r *roundTripper) writeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if until, fenced := r.gate.fenceUntil(); fenced {
		return context.WithDeadline(ctx, until)
	}
	return context.WithCancel(ctx)
}

// cancelOnClose ends a write's context once its response is read.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// WrappedRoundTripper lets client-go's transport debugging see through.
func (r *roundTripper) WrappedRoundTripper() http.RoundTripper { return r.next }

// WrapConfig returns a copy of cfg whose clients go through the gate.
func WrapConfig(cfg *rest.Config, g *Gate) *rest.Config {
	out := rest.CopyConfig(cfg)
	gated := gatedTransport(cfg, g)
	out.Wrap(transport.WrapperFunc(func(rt http.RoundTripper) http.RoundTripper {
		return &roundTripper{gate: g, next: rt, gated: gated}
	}))
	return out
}

// Dynamic wraps a dynamic client so writes go through the gate.
func Dynamic(c dynamic.Interface, g *Gate) dynamic.Interface { return &dyn{c: c, g: g} }

type dyn struct {
	c dynamic.Interface
	g *Gate
}

func (d *dyn) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	r := d.c.Resource(gvr)
	return &dynNamespaceable{dynResource: dynResource{ResourceInterface: r, g: d.g, what: gvr.String()}, r: r}
}

type dynNamespaceable struct {
	dynResource
	r dynamic.NamespaceableResourceInterface
}

func (d *dynNamespaceable) Namespace(ns string) dynamic.ResourceInterface {
	return &dynResource{ResourceInterface: d.r.Namespace(ns), g: d.g, what: d.what + " in " + ns}
}

// dynResource passes reads through and checks the gate before each write.
type dynResource struct {
	dynamic.ResourceInterface
	g    *Gate
	what string
}

func (d *dynResource) check(ctx context.Context, verb, name string) error {
	return d.g.refuse(ctx, verb, d.what+" "+name)
}

func (d *dynResource) Create(ctx context.Context, obj *unstructured.Unstructured, o metav1.CreateOptions, sub ...string) (*unstructured.Unstructured, error) {
	if err := d.check(ctx, "create", obj.GetName()); err != nil {
		return nil, err
	}
	return d.ResourceInterface.Create(ctx, obj, o, sub...)
}

func (d *dynResource) Update(ctx context.Context, obj *unstructured.Unstructured, o metav1.UpdateOptions, sub ...string) (*unstructured.Unstructured, error) {
	if err := d.check(ctx, "update", obj.GetName()); err != nil {
		return nil, err
	}
	return d.ResourceInterface.Update(ctx, obj, o, sub...)
}

func (d *dynResource) UpdateStatus(ctx context.Context, obj *unstructured.Unstructured, o metav1.UpdateOptions) (*unstructured.Unstructured, error) {
	if err := d.check(ctx, "update status", obj.GetName()); err != nil {
		return nil, err
	}
	return d.ResourceInterface.UpdateStatus(ctx, obj, o)
}

func (d *dynResource) Delete(ctx context.Context, name string, o metav1.DeleteOptions, sub ...string) error {
	if err := d.check(ctx, "delete", name); err != nil {
		return err
	}
	return d.ResourceInterface.Delete(ctx, name, o, sub...)
}

func (d *dynResource) DeleteCollection(ctx context.Context, o metav1.DeleteOptions, lo metav1.ListOptions) error {
	if err := d.check(ctx, "deletecollection", ""); err != nil {
		return err
	}
	return d.ResourceInterface.DeleteCollection(ctx, o, lo)
}

func (d *dynResource) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, o metav1.PatchOptions, sub ...string) (*unstructured.Unstructured, error) {
	if err := d.check(ctx, "patch", name); err != nil {
		return nil, err
	}
	return d.ResourceInterface.Patch(ctx, name, pt, data, o, sub...)
}

func (d *dynResource) Apply(ctx context.Context, name string, obj *unstructured.Unstructured, o metav1.ApplyOptions, sub ...string) (*unstructured.Unstructured, error) {
	if err := d.check(ctx, "apply", name); err != nil {
		return nil, err
	}
	return d.ResourceInterface.Apply(ctx, name, obj, o, sub...)
}

func (d *dynResource) ApplyStatus(ctx context.Context, name string, obj *unstructured.Unstructured, o metav1.ApplyOptions) (*unstructured.Unstructured, error) {
	if err := d.check(ctx, "apply status", name); err != nil {
		return nil, err
	}
	return d.ResourceInterface.ApplyStatus(ctx, name, obj, o)
}

// Metadata wraps a metadata client so writes go through the gate.
func Metadata(c metadata.Interface, g *Gate) metadata.Interface { return &meta{c: c, g: g} }

type meta struct {
	c metadata.Interface
	g *Gate
}

func (m *meta) Resource(gvr schema.GroupVersionResource) metadata.Getter {
	r := m.c.Resource(gvr)
	return &metaGetter{metaResource: metaResource{ResourceInterface: r, g: m.g, what: gvr.String()}, r: r}
}

type metaGetter struct {
	metaResource
	r metadata.Getter
}

func (m *metaGetter) Namespace(ns string) metadata.ResourceInterface {
	return &metaResource{ResourceInterface: m.r.Namespace(ns), g: m.g, what: m.what + " in " + ns}
}

type metaResource struct {
	metadata.ResourceInterface
	g    *Gate
	what string
}

func (m *metaResource) check(ctx context.Context, verb, name string) error {
	return m.g.refuse(ctx, verb, m.what+" "+name)
}

func (m *metaResource) Delete(ctx context.Context, name string, o metav1.DeleteOptions, sub ...string) error {
	if err := m.check(ctx, "delete", name); err != nil {
		return err
	}
	return m.ResourceInterface.Delete(ctx, name, o, sub...)
}

func (m *metaResource) DeleteCollection(ctx context.Context, o metav1.DeleteOptions, lo metav1.ListOptions) error {
	if err := m.check(ctx, "deletecollection", ""); err != nil {
		return err
	}
	return m.ResourceInterface.DeleteCollection(ctx, o, lo)
}

func (m *metaResource) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, o metav1.PatchOptions, sub ...string) (*metav1.PartialObjectMetadata, error) {
	if err := m.check(ctx, "patch", name); err != nil {
		return nil, err
	}
	return m.ResourceInterface.Patch(ctx, name, pt, data, o, sub...)
}
