package main

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
)

// Counts are the engine's requests by kind. Writes are split into Events,
// the Lease, and the rest (objects and status); the rest, and the reads,
// are also counted by verb (Mix). Access reviews (POSTs of
// SelfSubjectAccessReviews and the like, which store nothing: they ask what
// the engine may do) are counted apart, as Reviews.
type Counts struct {
	Other, Events, Lease, Reads, Reviews int64
	Mix                                  Mix
}

// Mix is the engine's requests for objects and status by verb, the Lease
// and Events left out. A PATCH is told apart by its content type (apply or
// merge) and by its path (the status subresource).
type Mix struct {
	Get, Post, Apply, Merge, Status, Put, Delete, List int64
}

// verb classes, the indexes of counter.mix.
const (
	vGet = iota
	vList
	vPost
	vApply
	vMerge
	vStatus
	vPut
	vDelete
	nVerbs
)

type counter struct {
	next                        http.RoundTripper
	other, events, lease, reads atomic.Int64
	reviews                     atomic.Int64
	mix                         [nVerbs]atomic.Int64
	tmpl                        *templateRecorder
}

func (c *counter) RoundTrip(req *http.Request) (*http.Response, error) {
	p := req.URL.Path
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		c.reads.Add(1)
		if !strings.Contains(p, "/leases") && req.URL.Query().Get("watch") == "" {
			c.mix[getOrList(req)].Add(1)
		}
	default:
		switch {
		case strings.Contains(p, "/events"):
			c.events.Add(1)
		case strings.Contains(p, "/leases"):
			c.lease.Add(1)
		case strings.HasSuffix(p, "reviews"):
			c.reviews.Add(1)
		default:
			c.other.Add(1)
			c.mix[writeVerb(req)].Add(1)
		}
	}
	if c.tmpl != nil {
		return c.tmpl.roundTrip(c.next, req)
	}
	return c.next.RoundTrip(req)
}

// getOrList tells a GET of one object from a list: a list's last path
// segment is the resource's plural, which names no object of it.
func getOrList(req *http.Request) int {
	if req.URL.Query().Has("labelSelector") || req.URL.Query().Has("limit") {
		return vList
	}
	return vGet
}

func writeVerb(req *http.Request) int {
	switch req.Method {
	case http.MethodPost:
		return vPost
	case http.MethodPut:
		return vPut
	case http.MethodDelete:
		return vDelete
	}
	switch {
	case strings.HasSuffix(req.URL.Path, "/status"):
		return vStatus
	case strings.Contains(req.Header.Get("Content-Type"), "apply-patch"):
		return vApply
	}
	return vMerge
}

// take returns the counts so far and starts again from zero.
func (c *counter) take() Counts {
	var m [nVerbs]int64
	for i := range m {
		m[i] = c.mix[i].Swap(0)
	}
	return Counts{Other: c.other.Swap(0), Events: c.events.Swap(0), Lease: c.lease.Swap(0), Reads: c.reads.Swap(0), Reviews: c.reviews.Swap(0),
		Mix: Mix{Get: m[vGet], List: m[vList], Post: m[vPost], Apply: m[vApply], Merge: m[vMerge], Status: m[vStatus], Put: m[vPut], Delete: m[vDelete]}}
}

// Request is one request the engine sent for the template instance, as
// the benchmark's floor replays it for others.
type Request struct {
	Method      string `json:"method"`
	Path        string `json:"path"`
	Query       string `json:"query"`
	ContentType string `json:"contentType"`
	Body        string `json:"body"`
	Code        int    `json:"code"`
}

// templateRecorder keeps the requests (not watches) whose path names the
// template instance or one of its children: name, or name followed by "-"
// (the chain's children are <instance>-a, -b, -c).
type templateRecorder struct {
	name string
	mu   sync.Mutex
	reqs []Request
}

func (t *templateRecorder) matches(path string) bool {
	i := strings.LastIndexByte(path, '/')
	last := path[i+1:]
	if last == "status" {
		j := strings.LastIndexByte(path[:i], '/')
		last = path[j+1 : i]
	}
	return last == t.name || strings.HasPrefix(last, t.name+"-")
}

func (t *templateRecorder) roundTrip(next http.RoundTripper, req *http.Request) (*http.Response, error) {
	if !t.matches(req.URL.Path) || req.URL.Query().Get("watch") != "" {
		return next.RoundTrip(req)
	}
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	resp, err := next.RoundTrip(req)
	r := Request{Method: req.Method, Path: req.URL.Path, Query: req.URL.RawQuery, ContentType: req.Header.Get("Content-Type"), Body: string(body)}
	if resp != nil {
		r.Code = resp.StatusCode
	}
	t.mu.Lock()
	t.reqs = append(t.reqs, r)
	t.mu.Unlock()
	return resp, err
}

func (t *templateRecorder) take() []Request {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.reqs
}
