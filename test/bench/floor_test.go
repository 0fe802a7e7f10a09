//go:build bench

package bench

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
)

// request is one request the engine sent for the template instance
// (benchengine's Request).
type request struct {
	Method, Path, Query, ContentType, Body string
	Code                                   int
}

// mix is the engine's requests by verb (benchengine's Mix).
type mix struct{ Get, Post, Apply, Merge, Status, Put, Delete, List int64 }

// floorResult is the request-mix floor: n instances created by 16 clients
// (as the benchmark creates them), then, for each, the engine's requests
// for the template instance replayed by a plain HTTP client at the engine's
// worker count, in the order the engine sent them.
type floorResult struct {
	creates, replay      time.Duration
	createCPU, replayCPU time.Duration // the API server's and etcd's
	requestsPerInstance  int
}

func (f floorResult) total() time.Duration { return f.creates + f.replay }

// replayer sends the template's requests for other instances.
type replayer struct {
	b         *testing.B
	hc        *http.Client
	host      string
	token     string
	ns, kind  string
	tmplName  string
	tmplUID   string
	tmpl      []request
	instances string // the instances' collection path
}

func newReplayer(b *testing.B, cfg *rest.Config, ns, kind, resource, tmplName, tmplUID string, tmpl []request) *replayer {
	raw := rest.CopyConfig(cfg)
	raw.QPS, raw.Burst = -1, 0
	hc, err := rest.HTTPClientFor(raw)
	if err != nil {
		b.Fatal(err)
	}
	return &replayer{b: b, hc: hc, host: strings.TrimRight(raw.Host, "/"), token: raw.BearerToken, ns: ns, kind: kind,
		tmplName: tmplName, tmplUID: tmplUID, tmpl: tmpl, instances: "/apis/kro.run/v1alpha1/namespaces/" + ns + "/" + resource}
}

func (p *replayer) do(method, path, query, ctype string, body []byte) (int, []byte) {
	u := p.host + path
	if query != "" {
		u += "?" + query
	}
	req, _ := http.NewRequest(method, u, bytes.NewReader(body))
	if p.token != "" {
		req.Header.Set("Authorization", "Bearer "+p.token)
	}
	req.Header.Set("Accept", "application/json")
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := p.hc.Do(req)
	if err != nil {
		p.b.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// floor measures the request-mix floor for n instances named f0000...
func (p *replayer) floor(n, concurrency int) floorResult {
	names := make([]string, n)
	uids := make([]string, n)
	rvs := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("f%04d", i)
	}
	keep := func(i int, out []byte) {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(out); err == nil {
			uids[i], rvs[i] = string(u.GetUID()), u.GetResourceVersion()
		}
	}
	// A connection open before the clock starts, as the engine's is.
	p.do("GET", "/version", "", "", nil)
	var f floorResult
	f.requestsPerInstance = len(p.tmpl)
	f.creates, f.createCPU = parallel(p.b, n, 16, func(i int) {
		body := `{"apiVersion":"kro.run/v1alpha1","kind":"` + p.kind + `","metadata":{"name":"` + names[i] + `","namespace":"` + p.ns + `"},"spec":{}}`
		code, out := p.do("POST", p.instances, "", "application/json", []byte(body))
		if code != 201 {
			p.b.Errorf("creating instance %s: %d %s", names[i], code, out)
			return
		}
		keep(i, out)
	})
	f.replay, f.replayCPU = parallel(p.b, n, concurrency, func(i int) {
		for _, r := range p.tmpl {
			path := strings.ReplaceAll(r.Path, "/"+p.tmplName, "/"+names[i])
			body := p.subst(r.Body, names[i], uids[i], rvs[i])
			code, out := p.do(r.Method, path, r.Query, r.ContentType, []byte(body))
			if code != r.Code {
				p.b.Errorf("replaying %s %s for %s: %d (the engine's got %d) %s", r.Method, path, names[i], code, r.Code, out)
				return
			}
			if code < 300 && (strings.HasSuffix(path, "/"+names[i]) || strings.HasSuffix(path, "/"+names[i]+"/status")) {
				keep(i, out)
			}
		}
	})
	return f
}

// subst makes the template's body the named instance's: its name, its UID
// and its current resourceVersion.
func (p *replayer) subst(body, name, uid, rv string) string {
	if body == "" {
		return body
	}
	s := strings.ReplaceAll(body, p.tmplUID, uid)
	s = strings.ReplaceAll(s, `"`+p.tmplName, `"`+name)
	s = strings.ReplaceAll(s, "/"+p.tmplName, "/"+name)
	return rvRE(s, rv)
}

// parallel runs do(0..n-1) from concurrency clients and returns the time it
// took and the API server's and etcd's CPU meanwhile.
func parallel(b *testing.B, n, concurrency int, do func(i int)) (time.Duration, time.Duration) {
	cpu0 := serverCPU(b)
	took := parallelClients(n, concurrency, do)
	return took, serverCPU(b) - cpu0
}

// parallelClients runs do(0..n-1) from concurrency goroutines and returns
// the time it took.
func parallelClients(n, concurrency int, do func(i int)) time.Duration {
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range concurrency {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				do(i)
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}

// templateUID is the template instance's UID, read from the API server.
func templateUID(b *testing.B, cfg *rest.Config, path string) string {
	p := newReplayer(b, cfg, "", "", "", "", "", nil)
	code, out := p.do("GET", path, "", "", nil)
	if code != 200 {
		b.Fatalf("reading the template instance: %d %s", code, out)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(out); err != nil {
		b.Fatal(err)
	}
	return string(u.GetUID())
}
