package engine

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"

	"github.com/kroscope/kroscope/engine/state"
)

// A failed API call made for an instance lands in its log with the HTTP
// status and the server's message, and the client still reads the body.
func TestNoteCallLogsFailedCallsOfTheInstance(t *testing.T) {
	e := &Engine{store: state.NewStore()}
	key := state.InstanceKey{Resource: "webapps.kro.run", Namespace: "demo", Name: "flaky"}
	e.store.UpdateInstance(key, func(in *state.Instance) { in.State = "IN_PROGRESS" })
	call := func(method string, code int, body string, ctx context.Context) *http.Response {
		req := (&http.Request{Method: method, URL: &url.URL{Path: "/api/v1/namespaces/demo/configmaps/flaky-a"}}).WithContext(ctx)
		resp := &http.Response{StatusCode: code, Body: io.NopCloser(strings.NewReader(body))}
		callLog(e.store, logr.Discard())(req, resp, nil)
		return resp
	}
	ctx := withInstance(context.Background(), key)
	status := `{"kind":"Status","status":"Failure","message":"etcdserver: request timed out","code":500}`
	resp := call("PATCH", 500, status, ctx)
	if b, _ := io.ReadAll(resp.Body); string(b) != status {
		t.Fatalf("the client lost the body: %q", b)
	}
	call("GET", 404, `{"message":"not found"}`, ctx) // how a missing object is learnt: not logged
	call("PATCH", 500, status, context.Background()) // not made for an instance
	call("PATCH", 200, `{}`, ctx)                    // fine
	log := e.store.Instance(key).Log
	if len(log) != 1 {
		t.Fatalf("log = %+v, want one line", log)
	}
	l := log[0]
	if l.Level != "error" || l.Message != "PATCH configmaps/flaky-a: HTTP 500 Internal Server Error: etcdserver: request timed out" ||
		l.KV != "path=/api/v1/namespaces/demo/configmaps/flaky-a" {
		t.Fatalf("line = %+v", l)
	}
}

// An API path, short (an instance's log line) and as a kind of call (the
// engine's log says one line a minute per kind).
func TestShortPathAndResource(t *testing.T) {
	for in, want := range map[string][2]string{
		"/api/v1/namespaces/demo/configmaps/a":                 {"configmaps/a", "configmaps"},
		"/api/v1/namespaces/demo/configmaps":                   {"configmaps", "configmaps"},
		"/apis/apps/v1/namespaces/demo/deployments/web":        {"deployments/web", "deployments"},
		"/apis/kro.run/v1alpha1/namespaces/d/webapps/x/status": {"webapps/x/status", "webapps/status"},
		"/api/v1/namespaces/demo":                              {"namespaces/demo", "namespaces"},
		"/apis/rbac.authorization.k8s.io/v1/clusterroles/r":    {"clusterroles/r", "clusterroles"},
		"/version": {"/version", "version"},
	} {
		if got := shortPath(in); got != want[0] {
			t.Errorf("shortPath(%q) = %q, want %q", in, got, want[0])
		}
		if got := resourceOf(in); got != want[1] {
			t.Errorf("resourceOf(%q) = %q, want %q", in, got, want[1])
		}
	}
}

func TestDecisionsNameChangedResources(t *testing.T) {
	prev := []state.Resource{{ID: "a", State: "SYNCED"}, {ID: "b", State: "PENDING", WaitingFor: "waiting for a (synced)"}}
	next := []state.Resource{{ID: "a", State: "SYNCED"}, {ID: "b", State: "ERROR", Err: "apply: HTTP 500"}}
	in := &state.Instance{State: "ERROR", Message: "b: apply failed", Reconciles: 4}
	got := decisions(prev, next, in, 12*time.Millisecond, time.Unix(0, 0))
	if len(got) != 2 || got[0].Message != "reconcile 4: ERROR in 12ms" || got[0].Level != "error" ||
		got[1].Message != "b: PENDING -> ERROR" || !strings.Contains(got[1].KV, "apply: HTTP 500") {
		t.Fatalf("decisions = %+v", got)
	}
	if quiet := decisions(next, next, &state.Instance{State: "ERROR", Reconciles: 5}, 0, time.Unix(0, 0)); len(quiet) != 1 || !strings.HasSuffix(quiet[0].Message, "no resource changed") {
		t.Fatalf("quiet reconcile = %+v", quiet)
	}
}

// An API error made for no instance is counted in the header, so it is
// said in the engine's log: once per kind of call and minute, with how
// many were not said since.
func TestUnboundAPIErrorsReachTheEngineLog(t *testing.T) {
	var lines []string
	log := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{})
	clock := time.Unix(1000, 0)
	r := &rareLines{every: time.Minute, now: func() time.Time { return clock }}
	fail := func(method, path string, code int) {
		req := &http.Request{Method: method, URL: &url.URL{Path: path}}
		req = req.WithContext(context.Background())
		resp := &http.Response{StatusCode: code, Body: io.NopCloser(strings.NewReader(`{"message":"etcdserver: leader changed"}`))}
		if !apiFailure(req, resp, nil) {
			t.Fatalf("%s %s %d: not an API failure", method, path, code)
		}
		r.say(log, req, resp, nil)
	}
	fail("GET", "/api/v1/namespaces/a/configmaps", 503)
	fail("GET", "/api/v1/namespaces/b/configmaps", 503) // same kind: quiet
	fail("POST", "/api/v1/namespaces/a/events", 500)    // another kind
	clock = clock.Add(time.Minute)
	fail("GET", "/api/v1/namespaces/c/configmaps", 503)
	if len(lines) != 3 {
		t.Fatalf("said %d lines, want 3:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	for i, want := range []string{"GET configmaps: HTTP 503 Service Unavailable: etcdserver: leader changed", "POST events: HTTP 500", `"same since last said"=1`} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("line %d = %s, want it to contain %q", i, lines[i], want)
		}
	}
	if strings.Contains(lines[0], "same since") {
		t.Errorf("first line says repeats: %s", lines[0])
	}
}
