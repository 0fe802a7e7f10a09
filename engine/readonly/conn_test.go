package readonly

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
)

type switchFence struct{ ok atomic.Bool }

func (f *switchFence) Valid() bool { return f.ok.Load() }

// A write that passed the gate and then waited (the process paused, the
// proof lapsing meanwhile) must not reach the server: the connection asks
// the gate again before it sends.
func TestWriteWaitingPastTheProofIsNotSent(t *testing.T) {
	var posts atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
		}
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()

	fence := &switchFence{}
	g := NewGate(true)
	g.SetFence(fence)
	cfg := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{
		CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}),
	}}
	// Between the gate and the socket: the proof lapses while this write
	// waits (pauseAfterGate set), as in a process frozen there.
	var pauseAfterGate atomic.Bool
	cfg.Wrap(transport.WrapperFunc(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if pauseAfterGate.Load() {
				fence.ok.Store(false)
			}
			return rt.RoundTrip(r)
		})
	}))
	c, err := rest.HTTPClientFor(WrapConfig(cfg, g))
	if err != nil {
		t.Fatal(err)
	}
	post := func() error {
		resp, err := c.Post(srv.URL+"/api/v1/namespaces/x/configmaps", "application/json", strings.NewReader("{}"))
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	fence.ok.Store(true)
	if err := post(); err != nil {
		t.Fatalf("POST while the proof holds: %v", err)
	}
	pauseAfterGate.Store(true)
	fence.ok.Store(true)
	if err := post(); !IsReadOnly(err) {
		t.Errorf("POST whose proof lapsed after the gate: err = %v, want a refusal", err)
	}
	if n := posts.Load(); n != 1 {
		t.Fatalf("server saw %d POSTs, want 1 (the one sent while the proof held)", n)
	}
	pauseAfterGate.Store(false)
	fence.ok.Store(true)
	if err := post(); err != nil {
		t.Fatalf("POST once the proof holds again: %v", err)
	}
	if resp, err := c.Get(srv.URL + "/api/v1/configmaps"); err != nil {
		t.Fatalf("GET: %v", err)
	} else {
		resp.Body.Close()
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
