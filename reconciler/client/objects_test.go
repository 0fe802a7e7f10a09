package client

import (
	"context"
	"fmt"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
)

// recorder is a Cache that knows nothing and logs what it is told.
type recorder struct {
	calls []string
	// held is what Child answers (nil: a miss); unseen what Unseen does.
	held   *unstructured.Unstructured
	unseen bool
}

func (r *recorder) Instance(schema.GroupVersionResource, string, string) (*unstructured.Unstructured, bool) {
	r.calls = append(r.calls, "Instance")
	return nil, false
}

func (r *recorder) Child(schema.GroupVersionResource, string, string) (*unstructured.Unstructured, bool) {
	r.calls = append(r.calls, "Child")
	if r.held != nil {
		return r.held.DeepCopy(), true
	}
	return nil, false
}

func (r *recorder) Unseen(schema.GroupVersionResource, string, string) bool {
	r.calls = append(r.calls, "Unseen")
	return r.unseen
}

func (r *recorder) Read(_ schema.GroupVersionResource, o *unstructured.Unstructured) {
	r.calls = append(r.calls, "Read "+o.GetResourceVersion())
}

func (r *recorder) Wrote(_ schema.GroupVersionResource, o *unstructured.Unstructured, replaces string) {
	r.calls = append(r.calls, fmt.Sprintf("Wrote %s replaces %q", o.GetResourceVersion(), replaces))
}

func (r *recorder) Stale(_ schema.GroupVersionResource, ns, name string) {
	r.calls = append(r.calls, "Stale "+ns+"/"+name)
}

func (r *recorder) Forget(_ schema.GroupVersionResource, ns, name string) {
	r.calls = append(r.calls, "Forget "+ns+"/"+name)
}

var cmGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// TestObjectsRecordEveryOutcome: each request's outcome reaches the Cache
// through the client itself, the protocol no caller repeats: reads record
// the object or its absence, writes the new version, a conflict makes the
// object stale, a missing object is forgotten, a no-op apply records
// nothing.
func TestObjectsRecordEveryOutcome(t *testing.T) {
	obj := func(rv string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("ConfigMap")
		u.SetNamespace("ns")
		u.SetName("a")
		u.SetResourceVersion(rv)
		return u
	}
	gr := cmGVR.GroupResource()
	conflict := apierrors.NewConflict(gr, "a", fmt.Errorf("changed"))
	notFound := apierrors.NewNotFound(gr, "a")
	ctx := context.Background()
	cases := []struct {
		name string
		// answer is what the API server answers: an object or an error.
		answer runtime.Object
		err    error
		call   func(o *Objects) error
		want   []string
	}{
		{"child read", obj("5"), nil, func(o *Objects) error { _, err := o.Child(ctx, cmGVR, "ns", "a"); return err },
			[]string{"Child", "Read 5"}},
		{"child absent", nil, notFound, func(o *Objects) error { _, err := o.Child(ctx, cmGVR, "ns", "a"); return err },
			[]string{"Child", "Forget ns/a"}},
		{"instance read", obj("5"), nil, func(o *Objects) error { _, err := o.Instance(ctx, cmGVR, "ns", "a"); return err },
			[]string{"Instance", "Read 5"}},
		{"live get", obj("5"), nil, func(o *Objects) error { _, err := o.Get(ctx, cmGVR, "ns", "a"); return err }, nil},
		{"create", obj("6"), nil, func(o *Objects) error {
			_, err := o.Apply(ctx, cmGVR, obj(""), metav1.ApplyOptions{FieldManager: "t"}, "")
			return err
		}, []string{`Wrote 6 replaces ""`}},
		{"update", obj("6"), nil, func(o *Objects) error {
			_, err := o.Apply(ctx, cmGVR, obj(""), metav1.ApplyOptions{FieldManager: "t"}, "5")
			return err
		}, []string{`Wrote 6 replaces "5"`}},
		{"no-op apply", obj("5"), nil, func(o *Objects) error {
			_, err := o.Apply(ctx, cmGVR, obj(""), metav1.ApplyOptions{FieldManager: "t"}, "5")
			return err
		}, nil},
		{"apply conflict", nil, conflict, func(o *Objects) error {
			_, err := o.Apply(ctx, cmGVR, obj(""), metav1.ApplyOptions{FieldManager: "t"}, "5")
			return err
		}, nil},
		{"patch", obj("7"), nil, func(o *Objects) error { _, err := o.Patch(ctx, cmGVR, "ns", "a", []byte("{}"), "6"); return err },
			[]string{`Wrote 7 replaces "6"`}},
		{"patch conflict", nil, conflict, func(o *Objects) error { _, err := o.Patch(ctx, cmGVR, "ns", "a", []byte("{}"), "6"); return err },
			[]string{"Stale ns/a"}},
		{"patch gone", nil, notFound, func(o *Objects) error { _, err := o.Patch(ctx, cmGVR, "ns", "a", []byte("{}"), "6"); return err },
			[]string{"Forget ns/a"}},
		{"delete", nil, nil, func(o *Objects) error { return o.Delete(ctx, cmGVR, "ns", "a", metav1.DeleteOptions{}) },
			[]string{"Forget ns/a"}},
		{"delete gone", nil, notFound, func(o *Objects) error { return o.Delete(ctx, cmGVR, "ns", "a", metav1.DeleteOptions{}) },
			[]string{"Forget ns/a"}},
		{"delete conflict", nil, conflict, func(o *Objects) error { return o.Delete(ctx, cmGVR, "ns", "a", metav1.DeleteOptions{}) },
			[]string{"Stale ns/a"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{cmGVR: "ConfigMapList"})
			dyn.PrependReactor("*", "*", func(clienttesting.Action) (bool, runtime.Object, error) {
				return true, c.answer, c.err
			})
			rec := &recorder{}
			err := c.call(NewObjects(NewSetFromClients(Clients{Dynamic: dyn}), rec))
			// Only a read turns NotFound into (nil, nil).
			if wantErr := c.err != nil && c.name != "child absent"; (err != nil) != wantErr {
				t.Errorf("error %v, API server answered %v", err, c.err)
			}
			if !slices.Equal(rec.calls, c.want) {
				t.Errorf("cache was told %q, want %q", rec.calls, c.want)
			}
		})
	}
}

// TestObjectsWithoutCache: a nil Cache asks the API server for every read.
func TestObjectsWithoutCache(t *testing.T) {
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{cmGVR: "ConfigMapList"})
	gets := 0
	dyn.PrependReactor("get", "configmaps", func(clienttesting.Action) (bool, runtime.Object, error) {
		gets++
		return true, nil, apierrors.NewNotFound(cmGVR.GroupResource(), "a")
	})
	o := NewObjects(NewSetFromClients(Clients{Dynamic: dyn}), nil)
	u, err := o.Child(context.Background(), cmGVR, "ns", "a")
	if u != nil || err != nil || gets != 1 {
		t.Errorf("Child = %v, %v after %d GETs; want nil, nil after 1", u, err, gets)
	}
	// Recording with no Cache is no call at all (no nil dereference).
	if err := o.Delete(context.Background(), cmGVR, "ns", "a", metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Delete: %v, want NotFound", err)
	}
}

// TestKnownChild: what a writer may take as known before it writes. A
// child the watches show, of which no current copy is held (every child,
// for a process that just started), must be read: taking it for absent
// made every start send a refused create and re-apply each converged
// child (#40).
func TestKnownChild(t *testing.T) {
	held := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "a", "resourceVersion": "7"}}}
	for _, tc := range []struct {
		name     string
		cache    *recorder // nil: no Cache
		wantObj  bool
		wantKnow bool
	}{
		{"no cache: read", nil, false, false},
		{"current copy held: use it", &recorder{held: held}, true, true},
		{"watches show nothing there: create proves it free", &recorder{unseen: true}, false, true},
		{"watches show it, no copy held: read", &recorder{}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o *Objects
			if tc.cache == nil {
				o = NewObjects(nil, nil)
			} else {
				o = NewObjects(nil, tc.cache)
			}
			u, ok := o.KnownChild(cmGVR, "ns", "a")
			if (u != nil) != tc.wantObj || ok != tc.wantKnow {
				t.Errorf("KnownChild = (%v, %v), want object %v, known %v", u, ok, tc.wantObj, tc.wantKnow)
			}
		})
	}
}
