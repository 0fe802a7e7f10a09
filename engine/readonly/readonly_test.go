package readonly

import (
	"context"
	"net/http"
	"net/http/httptest"
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
