package readonly

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

func TestRoundTripperRefusesWritesWhileClosed(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	g := NewGate(false)
	c := &http.Client{Transport: RoundTripper(g, http.DefaultTransport)}
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		req, _ := http.NewRequest(m, srv.URL+"/api/v1/namespaces/x/configmaps", nil)
		_, err := c.Do(req)
		if !IsReadOnly(err) {
			t.Errorf("%s: err = %v, want a read-only refusal", m, err)
		}
	}
	if resp, err := c.Get(srv.URL + "/api/v1/configmaps?watch=true"); err != nil {
		t.Fatalf("GET refused: %v", err)
	} else {
		resp.Body.Close()
	}
	if hits.Load() != 1 {
		t.Fatalf("server saw %d requests, want only the GET", hits.Load())
	}
	g.Set(true)
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/x", nil)
	if resp, err := c.Do(req); err != nil {
		t.Fatalf("POST with open gate: %v", err)
	} else {
		resp.Body.Close()
	}
}

func TestDynamicWrapper(t *testing.T) {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a", "namespace": "ns"}}}
	fake := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{gvr: "ConfigMapList"}, cm)
	g := NewGate(false)
	d := Dynamic(fake, g)
	ctx := context.Background()
	if _, err := d.Resource(gvr).Namespace("ns").Get(ctx, "a", metav1.GetOptions{}); err != nil {
		t.Fatalf("get: %v", err)
	}
	if err := d.Resource(gvr).Namespace("ns").Delete(ctx, "a", metav1.DeleteOptions{}); !IsReadOnly(err) {
		t.Fatalf("delete: err = %v", err)
	}
	if _, err := d.Resource(gvr).Namespace("ns").Create(ctx, cm, metav1.CreateOptions{}); !IsReadOnly(err) {
		t.Fatalf("create: err = %v", err)
	}
	g.Set(true)
	if err := d.Resource(gvr).Namespace("ns").Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete with open gate: %v", err)
	}
}

// A user's own requeue (PATCH) and delete pass a closed gate under
// UserWrite; every other write, and any write without it, is refused.
func TestUserWritePassesOnlyPatchAndDelete(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	c := &http.Client{Transport: RoundTripper(NewGate(false), http.DefaultTransport)}
	user := UserWrite(context.Background())
	for _, tc := range []struct {
		method string
		ctx    context.Context
		pass   bool
	}{
		{http.MethodPatch, user, true}, {http.MethodDelete, user, true},
		{http.MethodPost, user, false}, {http.MethodPut, user, false},
		{http.MethodPatch, context.Background(), false}, {http.MethodDelete, context.Background(), false},
	} {
		before := hits.Load()
		req, _ := http.NewRequestWithContext(tc.ctx, tc.method, srv.URL+"/apis/x/v1/namespaces/ns/things/a", nil)
		resp, err := c.Do(req)
		if resp != nil {
			resp.Body.Close()
		}
		passed := hits.Load() > before
		if passed != tc.pass || (!tc.pass && !IsReadOnly(err)) {
			t.Errorf("%s (user write %v): reached the server %v (err %v), want %v", tc.method, tc.ctx == user, passed, err, tc.pass)
		}
	}

	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a", "namespace": "ns"}}}
	fake := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{gvr: "ConfigMapList"}, cm)
	d := Dynamic(fake, NewGate(false)).Resource(gvr).Namespace("ns")
	if _, err := d.Patch(user, "a", "application/merge-patch+json", []byte(`{"metadata":{"annotations":{"k":"v"}}}`), metav1.PatchOptions{}); err != nil {
		t.Errorf("user patch through the dynamic wrapper: %v", err)
	}
	if _, err := d.Update(user, cm, metav1.UpdateOptions{}); !IsReadOnly(err) {
		t.Errorf("user update through the dynamic wrapper: err = %v, want refused", err)
	}
	if err := d.Delete(user, "a", metav1.DeleteOptions{}); err != nil {
		t.Errorf("user delete through the dynamic wrapper: %v", err)
	}
}

type fakeFence struct{ ok atomic.Bool }

func (f *fakeFence) Valid() bool { return f.ok.Load() }

// An open gate whose fence lapsed refuses every write before it is sent,
// saying why, and passes them again once the fence holds.
func TestGateClosesWhenItsFenceLapses(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	g := NewGate(true)
	f := &fakeFence{}
	g.SetFence(f)
	c := &http.Client{Transport: RoundTripper(g, http.DefaultTransport)}
	post := func() error {
		req, _ := http.NewRequest(http.MethodPatch, srv.URL+"/api/v1/namespaces/x/configmaps/y", nil)
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	err := post()
	var re *Error
	if !errors.As(err, &re) || !re.Fenced || !strings.Contains(err.Error(), "cannot prove") {
		t.Fatalf("write with a lapsed fence: err = %v, want a fenced refusal", err)
	}
	if g.Open() {
		t.Error("Open() with a lapsed fence")
	}
	if hits.Load() != 0 {
		t.Fatalf("the server saw %d requests", hits.Load())
	}
	f.ok.Store(true)
	if err := post(); err != nil || hits.Load() != 1 {
		t.Fatalf("write with the fence holding: err = %v, hits = %d", err, hits.Load())
	}
	g.Set(false)
	if err := post(); !IsReadOnly(err) || errors.As(err, &re) && re.Fenced {
		t.Fatalf("closed gate: err = %v, want a plain read-only refusal", err)
	}
}
