package lease

import (
	"context"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/transport"
)

// deadline: a Lease write decided at sent may leave the process while the
// Lease, as this process last renewed it, cannot have moved, and never
// less than margin after the decision.
func TestLeaseWriteDeadline(t *testing.T) {
	const d = 15 * time.Second
	s := time.Unix(1000, 0)
	for _, c := range []struct {
		name     string
		renewed  *time.Time // last accepted renewal sent then (nil: none)
		lapsed   bool
		decided  time.Time
		wantSend time.Time
	}{
		{"renewal while the proof holds", &s, false, s.Add(2 * time.Second), s.Add(d - Margin(d))},
		{"renewal right after the last", &s, false, s, s.Add(d - Margin(d))},
		{"decided after the proof and its grace", &s, false, s.Add(20 * time.Second), s.Add(20*time.Second + Margin(d))},
		{"acquisition, never renewed", nil, false, s, s.Add(Margin(d))},
		{"after a release", &s, true, s.Add(time.Second), s.Add(time.Second + Margin(d))},
	} {
		f := FenceFor(d)
		if c.renewed != nil {
			f.renewed(*c.renewed)
		}
		if c.lapsed {
			f.Lapse()
		}
		l := newFencedLock(nil, f, d)
		if got := l.deadline(c.decided); !got.Equal(c.wantSend) {
			t.Errorf("%s: deadline = %v after the renewal, want %v", c.name, got.Sub(s), c.wantSend.Sub(s))
		}
	}
}

// leaseServer answers the Lease's GET and counts its PUTs.
func leaseServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var puts atomic.Int64
	const lease = `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l","namespace":"ns","resourceVersion":"1"},"spec":{"holderIdentity":"me"}}`
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPut {
			puts.Add(1)
			_, _ = io.Copy(io.Discard, r.Body)
		}
		_, _ = io.WriteString(w, lease)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, &puts
}

// A renewal the election decided, and which then waited (the process
// paused between the decision and the socket) past the moment the Lease
// could have moved, is not sent: the Lease's connection asks the Fence.
func TestLeaseWriteWaitingPastItsDeadlineIsNotSent(t *testing.T) {
	srv, puts := leaseServer(t)
	const d = 15 * time.Second
	var mu sync.Mutex
	clock := time.Unix(1000, 0)
	f := FenceFor(d)
	f.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	cfg := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{
		CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}),
	}}
	var pause atomic.Bool // between the decision and the socket, as a frozen process
	cfg.Wrap(transport.WrapperFunc(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodPut && pause.Load() {
				mu.Lock()
				clock = clock.Add(2 * d)
				mu.Unlock()
			}
			return rt.RoundTrip(r)
		})
	}))
	plain, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := Config{Client: plain, Rest: cfg, Namespace: "ns", Name: "l", Identity: "me", LeaseDuration: d, Fence: f}
	lock := newFencedLock(&resourcelock.LeaseLock{
		LeaseMeta: metav1.ObjectMeta{Namespace: "ns", Name: "l"}, Client: lockClient(c).CoordinationV1(), LockConfig: resourcelock.ResourceLockConfig{Identity: "me"},
	}, f, d)
	ctx := context.Background()
	if _, _, err := lock.Get(ctx); err != nil {
		t.Fatal(err)
	}
	mine := resourcelock.LeaderElectionRecord{HolderIdentity: "me", LeaseDurationSeconds: 15}
	if err := lock.Update(ctx, mine); err != nil {
		t.Fatalf("renewal sent at once: %v", err)
	}
	pause.Store(true)
	if err := lock.Update(ctx, mine); err == nil {
		t.Error("a renewal that waited past its deadline succeeded")
	}
	if n := puts.Load(); n != 1 {
		t.Fatalf("server saw %d PUTs, want 1 (the renewal sent at once)", n)
	}
	pause.Store(false)
	if _, _, err := lock.Get(ctx); err != nil {
		t.Fatalf("reading the Lease again after a refused write: %v", err)
	}
	if err := lock.Update(ctx, mine); err != nil {
		t.Fatalf("a renewal decided afresh: %v", err)
	}
	if n := puts.Load(); n != 2 {
		t.Fatalf("server saw %d PUTs, want 2", n)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
