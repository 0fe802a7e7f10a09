package engrun

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kroscope/kroscope/test/envtest"
)

// firstWrites is how many writes Counter names, for failure messages.
const firstWrites = 10

// Counter counts the requests sent through the transports it wraps: every
// request, the reads, the writes (any other method, Lease writes included:
// a kroscope that takes its Lease writes; access reviews are left out, they
// store nothing), the Lease writes and the DELETEs among them. It names the
// first writes, and keeps each write's path per impersonated user ("" for
// none), Event writes left out. It sits below client-go's impersonation
// wrapper, so it sees the Impersonate-User header.
type Counter struct {
	reqs, reads, writes, leaseWrites, deletes atomic.Int64

	mu     sync.Mutex
	first  []string
	byUser map[string][]string
}

// Wrap returns next with c counting its requests (for rest.Config.Wrap).
func (c *Counter) Wrap(next http.RoundTripper) http.RoundTripper {
	return counting{c: c, next: next}
}

type counting struct {
	c    *Counter
	next http.RoundTripper
}

func (t counting) RoundTrip(req *http.Request) (*http.Response, error) {
	t.c.add(req)
	return t.next.RoundTrip(req)
}

func (c *Counter) add(req *http.Request) {
	c.reqs.Add(1)
	path := req.URL.Path
	switch {
	case req.Method == http.MethodGet || req.Method == http.MethodHead || req.Method == http.MethodOptions:
		c.reads.Add(1)
		return
	case envtest.IsAccessReview(path):
		return
	}
	c.writes.Add(1)
	if strings.Contains(path, "/leases") {
		c.leaseWrites.Add(1)
	}
	if req.Method == http.MethodDelete {
		c.deletes.Add(1)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.first) < firstWrites {
		c.first = append(c.first, req.Method+" "+path)
	}
	if !strings.Contains(path, "/events") {
		if c.byUser == nil {
			c.byUser = map[string][]string{}
		}
		user := req.Header.Get("Impersonate-User")
		c.byUser[user] = append(c.byUser[user], req.Method+" "+path)
	}
}

// Requests is how many requests were sent.
func (c *Counter) Requests() int64 { return c.reqs.Load() }

// Reads is how many GET, HEAD and OPTIONS requests were sent.
func (c *Counter) Reads() int64 { return c.reads.Load() }

// Writes is how many writes were sent, Lease writes included.
func (c *Counter) Writes() int64 { return c.writes.Load() }

// LeaseWrites is how many of the writes were to Leases.
func (c *Counter) LeaseWrites() int64 { return c.leaseWrites.Load() }

// Deletes is how many DELETE requests were sent.
func (c *Counter) Deletes() int64 { return c.deletes.Load() }

// FirstWrites names the first writes ("METHOD path"), at most ten.
func (c *Counter) FirstWrites() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.first...)
}

// WritesBy returns the paths written, per impersonated user ("" for the
// client's own identity), Event writes left out.
func (c *Counter) WritesBy() map[string][]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string][]string{}
	for k, v := range c.byUser {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// Reset starts every count and list again from zero.
func (c *Counter) Reset() {
	c.reqs.Store(0)
	c.reads.Store(0)
	c.writes.Store(0)
	c.leaseWrites.Store(0)
	c.deletes.Store(0)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.first, c.byUser = nil, nil
}
