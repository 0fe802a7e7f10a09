//go:build bench

package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/graphs"
)

// BenchmarkRequestCost times each kind of request kroscope sends for a
// chain instance, N of them from as many concurrent clients as the engine
// has workers, and reports the API server's (and etcd's) CPU per request:
// which of them cost the server most, next to the raw ConfigMap create the
// engine benchmark's floor is made of. The bodies are the ones kroscope's
// reconciler sent for a template instance, replayed with each instance's
// name, UID and resourceVersion. No watch is open, so watch fan-out is not
// in these figures.
func BenchmarkRequestCost(b *testing.B) {
	env := envtest.Start(b)
	n := 500
	if v, _ := strconv.Atoi(os.Getenv("BENCH_REQUESTS")); v > 0 {
		n = v
	}
	w := workers()
	ns := env.Namespace(b)
	kind := "BenchCost"
	rgds, err := graph.Parse([]byte(graphs.Chain("benchcost", kind)), "cost")
	if err != nil {
		b.Fatal(err)
	}
	rec := &recorder{}
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = -1, 0
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { rec.next = rt; return rec })
	cs, err := client.NewSet(cfg)
	if err != nil {
		b.Fatal(err)
	}
	g, err := graph.NewBuilder(graph.WithRESTMapper(cs.RESTMapper())).Build(rgds[0])
	if err != nil {
		b.Fatal(err)
	}
	env.InstallCRDs(b, g.Instance.CRD.DeepCopy())
	time.Sleep(3 * time.Second) // the API server's hold on creates for a new CRD
	c := reconciler.NewController(logr.Discard(), reconciler.ReconcileConfig{DefaultRequeueDuration: time.Second, DeletionGraceTimeDuration: time.Minute},
		g.Instance.GVR, g, cs, nil, metadata.NewGraphLabeler(g.Name, g.UID))

	raw := rest.CopyConfig(env.Config)
	raw.QPS, raw.Burst = -1, 0
	hc, err := rest.HTTPClientFor(raw)
	if err != nil {
		b.Fatal(err)
	}
	host := strings.TrimRight(raw.Host, "/")
	inst := "/apis/kro.run/v1alpha1/namespaces/" + ns + "/" + g.Instance.GVR.Resource
	cms := "/api/v1/namespaces/" + ns + "/configmaps"
	do := func(method, path, ctype string, body []byte) (int, []byte) {
		req, _ := http.NewRequest(method, host+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+raw.BearerToken)
		req.Header.Set("Accept", "application/json")
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, out
	}
	newInst := func(name string) []byte {
		return []byte(`{"apiVersion":"kro.run/v1alpha1","kind":"` + kind + `","metadata":{"name":"` + name + `","namespace":"` + ns + `"},"spec":{}}`)
	}

	// The template: one instance reconciled to ACTIVE, its requests kept.
	if code, out := do("POST", inst, "application/json", newInst("tmpl")); code != 201 {
		b.Fatalf("creating the template: %d %s", code, out)
	}
	for range 5 {
		_ = c.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "tmpl"}})
	}
	_, out := do("GET", inst+"/tmpl", "", nil)
	tmpl := &unstructured.Unstructured{}
	if err := tmpl.UnmarshalJSON(out); err != nil {
		b.Fatal(err)
	}
	if s, _, _ := unstructured.NestedString(tmpl.Object, "status", "state"); s != "ACTIVE" {
		b.Fatalf("template instance is %q, not ACTIVE", s)
	}
	tmplUID := string(tmpl.GetUID())
	var patchMeta, patchStatus, applyA []byte
	for _, r := range rec.reqs {
		switch {
		case r.method == "PATCH" && strings.HasSuffix(r.path, "/tmpl"):
			patchMeta = r.body
		case r.method == "PATCH" && strings.HasSuffix(r.path, "/tmpl/status") && patchStatus == nil:
			patchStatus = r.body
		case r.method == "PATCH" && strings.HasSuffix(r.path, "/tmpl-a"):
			applyA = r.body
		}
	}
	if patchMeta == nil || patchStatus == nil || applyA == nil {
		b.Fatalf("the template's requests lack a metadata patch, a status patch or an apply: %v", rec.reqs)
	}
	b.Logf("bodies: metadata patch %d B, status patch %d B, apply %d B", len(patchMeta), len(patchStatus), len(applyA))

	names := make([]string, n)
	uids := make([]string, n)
	rvs := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("i%04d", i)
	}
	subst := func(body []byte, i int) []byte {
		s := strings.ReplaceAll(string(body), tmplUID, uids[i])
		s = strings.ReplaceAll(s, `"tmpl`, `"`+names[i])
		s = strings.ReplaceAll(s, "tmpl-", names[i]+"-")
		if rvs[i] != "" && !bytes.Equal(body, applyA) {
			// The instance's version; an apply that creates a child
			// carries its own (client.Objects.Create).
			s = rvRE(s, rvs[i])
		}
		return []byte(s)
	}
	meta := func(out []byte, i int) {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(out); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		uids[i], rvs[i] = string(u.GetUID()), u.GetResourceVersion()
	}
	type step struct {
		name string
		// metric, when set, reports the server CPU per request as
		// "<metric>-µs" in the benchmark's result line.
		metric string
		req    func(i int) (int, []byte)
		want   int
		keep   bool // the response's UID and resourceVersion are the instance's
	}
	steps := []step{
		{"configmap create (raw floor)", "raw-create", func(i int) (int, []byte) {
			return do("POST", cms, "application/json", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"raw`+names[i]+`"},"data":{"k":"v"}}`))
		}, 201, false},
		{"instance create (the benchmark's)", "", func(i int) (int, []byte) { return do("POST", inst, "application/json", newInst(names[i])) }, 201, true},
		{"configmap get, absent (404): kroscope sent three before #29", "get-404", func(i int) (int, []byte) { return do("GET", cms+"/"+names[i]+"-a", "", nil) }, 404, false},
		{"instance metadata merge patch", "meta-patch", func(i int) (int, []byte) {
			return do("PATCH", inst+"/"+names[i], "application/merge-patch+json", subst(patchMeta, i))
		}, 200, true},
		{"configmap server-side apply (create)", "apply-create", func(i int) (int, []byte) {
			return do("PATCH", cms+"/"+names[i]+"-a?fieldManager=kroscope", "application/apply-patch+yaml", subst(applyA, i))
		}, 201, false},
		{"configmap server-side apply (no change)", "", func(i int) (int, []byte) {
			body := strings.Replace(string(subst(applyA, i)), `,"resourceVersion":"1"`, "", 1)
			return do("PATCH", cms+"/"+names[i]+"-a?fieldManager=kroscope", "application/apply-patch+yaml", []byte(body))
		}, 200, false},
		{"configmap create refused: the name is taken (409)", "", func(i int) (int, []byte) {
			return do("PATCH", cms+"/"+names[i]+"-a?fieldManager=kroscope", "application/apply-patch+yaml", subst(applyA, i))
		}, 409, false},
		{"instance status merge patch", "status-patch", func(i int) (int, []byte) {
			return do("PATCH", inst+"/"+names[i]+"/status?fieldManager=kroscope", "application/merge-patch+json", subst(patchStatus, i))
		}, 200, true},
		{"instance get", "", func(i int) (int, []byte) { return do("GET", inst+"/"+names[i], "", nil) }, 200, true},
		{"instance get + put (metadata: one label more)", "", func(i int) (int, []byte) {
			_, cur := do("GET", inst+"/"+names[i], "", nil)
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(cur); err != nil {
				b.Fatal(err)
			}
			l := u.GetLabels()
			l["bench/put"] = "x"
			u.SetLabels(l)
			body, _ := u.MarshalJSON()
			return do("PUT", inst+"/"+names[i]+"?fieldManager=kroscope", "application/json", body)
		}, 200, true},
		{"instance metadata merge patch (one label)", "", func(i int) (int, []byte) {
			return do("PATCH", inst+"/"+names[i]+"?fieldManager=kroscope", "application/merge-patch+json",
				[]byte(`{"metadata":{"resourceVersion":"`+rvs[i]+`","labels":{"bench/patch":"x"}}}`))
		}, 200, true},
		{"configmap create, kroscope's body (POST)", "", func(i int) (int, []byte) {
			body := strings.Replace(string(subst(applyA, i)), names[i]+"-a", names[i]+"-p", 1)
			body = strings.Replace(body, `,"resourceVersion":"1"`, "", 1)
			return do("POST", cms+"?fieldManager=kroscope", "application/json", []byte(body))
		}, 201, false},
		{"configmap server-side apply (create), minimal", "", func(i int) (int, []byte) {
			return do("PATCH", cms+"/"+names[i]+"-m?fieldManager=kroscope", "application/apply-patch+yaml",
				[]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"`+names[i]+`-m"},"data":{"k":"v"}}`))
		}, 201, false},
		{"instance status put (same status)", "", func(i int) (int, []byte) {
			_, cur := do("GET", inst+"/"+names[i], "", nil)
			return do("PUT", inst+"/"+names[i]+"/status?fieldManager=kroscope", "application/json", cur)
		}, 200, true},
	}
	cost := map[string]float64{}
	for _, s := range steps {
		cpu0 := serverCPU(b)
		start := time.Now()
		var next atomic.Int64
		var wg sync.WaitGroup
		for range w {
			wg.Go(func() {
				for {
					i := int(next.Add(1)) - 1
					if i >= n {
						return
					}
					code, out := s.req(i)
					if code != s.want {
						b.Errorf("%s %s: %d %s", s.name, names[i], code, out)
						return
					}
					if s.keep {
						meta(out, i)
					}
				}
			})
		}
		wg.Wait()
		took := time.Since(start)
		cpu := serverCPU(b) - cpu0
		perReq := cpu.Seconds() * 1e6 / float64(n)
		b.Logf("%-42s %5d in %6.3fs = %5.0f/s; API server+etcd CPU %5.0f µs/request", s.name, n, took.Seconds(), float64(n)/took.Seconds(), perReq)
		if s.metric != "" {
			b.ReportMetric(perReq, s.metric+"-µs")
			cost[s.metric] = perReq
		}
	}
	// A chain instance: one metadata patch, three applies that create, one
	// status patch (no GETs: each create proves its name free).
	inst1 := cost["meta-patch"] + 3*cost["apply-create"] + cost["status-patch"]
	b.ReportMetric(inst1, "per-instance-µs")
	b.ReportMetric(inst1/(5*cost["raw-create"]), "x-raw")
}

var rvPattern = `"resourceVersion":"`

// rvRE replaces the first resourceVersion value in s with rv.
func rvRE(s, rv string) string {
	i := strings.Index(s, rvPattern)
	if i < 0 {
		return s
	}
	j := strings.IndexByte(s[i+len(rvPattern):], '"')
	return s[:i+len(rvPattern)] + rv + s[i+len(rvPattern)+j:]
}

// recorder keeps the bodies of the requests sent through it.
type recorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	reqs []recorded
}

type recorded struct {
	method, path string
	body         []byte
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	r.mu.Lock()
	r.reqs = append(r.reqs, recorded{req.Method, req.URL.Path, body})
	r.mu.Unlock()
	return r.next.RoundTrip(req)
}

// serverCPU is the user+system CPU of this process's kube-apiserver and
// etcd children (envtest starts them), from /proc.
func serverCPU(b *testing.B) time.Duration {
	c := childCPU(b)
	return c.apiServer + c.etcd
}

// serverCPUs is the CPU of envtest's two server processes, apart.
type serverCPUs struct{ apiServer, etcd time.Duration }

func (c serverCPUs) sub(o serverCPUs) serverCPUs {
	return serverCPUs{c.apiServer - o.apiServer, c.etcd - o.etcd}
}

// childCPU reads the user+system CPU of this process's kube-apiserver and
// etcd children from /proc.
func childCPU(b *testing.B) serverCPUs {
	cpu := childrenCPU("kube-apiserver", "etcd")
	if cpu["kube-apiserver"] == 0 || cpu["etcd"] == 0 {
		b.Fatal("no kube-apiserver and etcd child processes found in /proc")
	}
	return serverCPUs{apiServer: cpu["kube-apiserver"], etcd: cpu["etcd"]}
}

// childrenCPU is the user+system CPU of this process's children with the
// command names given, by name, from /proc (a name with no child is absent).
func childrenCPU(names ...string) map[string]time.Duration {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	self := strconv.Itoa(os.Getpid())
	cpu := map[string]time.Duration{}
	for _, p := range stats {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(data)
		open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || close < 0 {
			continue
		}
		comm := s[open+1 : close]
		f := strings.Fields(s[close+2:])
		if !slices.Contains(names, comm) || len(f) < 13 || f[1] != self {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		cpu[comm] += time.Duration(u+st) * (time.Second / 100) // USER_HZ
	}
	return cpu
}
