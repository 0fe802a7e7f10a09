package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/kroscope/kroscope/engine/readonly"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler/redact"
)

// instanceCtxKey marks a context with the instance being reconciled, so
// the API calls made for it can be written to its log.
type instanceCtxKey struct{}

func withInstance(ctx context.Context, key state.InstanceKey) context.Context {
	return context.WithValue(ctx, instanceCtxKey{}, key)
}

func instanceFrom(ctx context.Context) (state.InstanceKey, bool) {
	k, ok := ctx.Value(instanceCtxKey{}).(state.InstanceKey)
	return k, ok
}

// bodyLimit bounds what is read of a failed response to find its message.
const bodyLimit = 64 << 10

// apiFailure decides whether a call counts as an API error (the header's
// "api errors N" and the metric): a transport error, unless it is a write
// refused in read-only mode (it never left) or the caller gave up, and
// every 429 and 5xx.
func apiFailure(req *http.Request, resp *http.Response, err error) bool {
	if err != nil {
		return !readonly.IsReadOnly(err) && req.Context().Err() == nil
	}
	return resp != nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500)
}

// callLog returns the callNote that writes a failed API call made for an
// instance to that instance's log in store: method, path, HTTP status and
// the server's message. A GET that finds nothing is how kroscope learns an
// object is missing, not a failure, and writes refused in read-only mode
// never left. An API error made for no instance (a watch, a probe, a
// graph's status) goes to the engine's log, so that every "api errors N"
// can be read somewhere, said once a minute per kind of call.
func callLog(store *state.Store, log logr.Logger) callNote {
	unbound := &rareLines{every: time.Minute}
	return func(req *http.Request, resp *http.Response, err error) {
		key, ok := instanceFrom(req.Context())
		if !ok {
			if apiFailure(req, resp, err) {
				unbound.say(log, req, resp, err)
			}
			return
		}
		line, ok := failedCall(req, resp, err)
		if !ok {
			return
		}
		// The reconcile that made the call knows its Secrets' values: the
		// server's answer may echo a field built from one, and so may the path.
		red := redact.FromContext(req.Context())
		line.Message, line.KV, line.At = red.String(line.Message), red.String(line.KV), time.Now()
		store.UpdateExisting(key, func(in *state.Instance) { in.Log = state.AppendBounded(in.Log, line) })
	}
}

// failedCall is the log line of a failed call; false when the call did
// not fail (or failed as expected).
func failedCall(req *http.Request, resp *http.Response, err error) (state.LogLine, bool) {
	switch {
	case err != nil:
		if readonly.IsReadOnly(err) || req.Context().Err() != nil {
			return state.LogLine{}, false
		}
		return state.LogLine{Level: "error", Message: fmt.Sprintf("%s %s failed: %v", req.Method, shortPath(req.URL.Path), err)}, true
	case resp.StatusCode >= 400:
		if resp.StatusCode == http.StatusNotFound && req.Method == http.MethodGet {
			return state.LogLine{}, false
		}
		// The status and message first: a narrow pane keeps the start.
		return state.LogLine{Level: "error", Message: fmt.Sprintf("%s %s: HTTP %d %s: %s", req.Method, shortPath(req.URL.Path),
			resp.StatusCode, http.StatusText(resp.StatusCode), serverMessage(resp)), KV: "path=" + req.URL.Path}, true
	}
	return state.LogLine{}, false
}

// rareLines says failed calls of the same kind (method, resource, status)
// at most once per period each, with how many were not said since.
type rareLines struct {
	every time.Duration
	now   func() time.Time // nil: time.Now
	mu    sync.Mutex
	last  map[string]time.Time
	quiet map[string]int
}

// maxRareKinds bounds the kinds remembered: past it, all are forgotten.
const maxRareKinds = 256

func (r *rareLines) say(log logr.Logger, req *http.Request, resp *http.Response, err error) {
	kind := req.Method + " " + resourceOf(req.URL.Path) + " " + strconv.Itoa(statusOf(resp))
	now := time.Now()
	if r.now != nil {
		now = r.now()
	}
	r.mu.Lock()
	if r.last == nil || len(r.last) >= maxRareKinds {
		r.last, r.quiet = map[string]time.Time{}, map[string]int{}
	}
	if at, ok := r.last[kind]; ok && now.Sub(at) < r.every {
		r.quiet[kind]++
		r.mu.Unlock()
		return
	}
	r.last[kind] = now
	more := r.quiet[kind]
	delete(r.quiet, kind)
	r.mu.Unlock()
	line, _ := failedCall(req, resp, err) // only for a line said: it reads the body
	kv := []any{"path", req.URL.Path}
	if more > 0 {
		kv = append(kv, "same since last said", more)
	}
	log.Error(nil, line.Message, kv...)
}

// statusOf is a response's HTTP status; 0 for a transport error.
func statusOf(resp *http.Response) int {
	if resp == nil {
		return 0
	}
	return resp.StatusCode
}

// resourceOf is the resource an API path names ("configmaps",
// "webapps/status"), without its object's name: calls on many objects of
// one kind are one kind of call.
func resourceOf(p string) string {
	parts := strings.Split(strings.Trim(shortPath(p), "/"), "/")
	if len(parts) >= 3 {
		return parts[0] + "/" + parts[2]
	}
	return parts[0]
}

// shortPath is an API path without its group, version and namespace:
// "configmaps/web-a" (the instance's namespace is the log's own).
func shortPath(p string) string {
	rest, ok := strings.CutPrefix(p, "/api/v1/")
	if !ok {
		if r, ok2 := strings.CutPrefix(p, "/apis/"); ok2 {
			if parts := strings.SplitN(r, "/", 3); len(parts) == 3 {
				rest, ok = parts[2], true
			}
		}
	}
	if !ok {
		return p
	}
	if r, ok := strings.CutPrefix(rest, "namespaces/"); ok {
		if _, after, found := strings.Cut(r, "/"); found {
			return after
		}
	}
	return rest
}

// serverMessage reads the API server's Status message from a failed
// response and puts the body back for the client that reads it next.
func serverMessage(resp *http.Response) string {
	if resp.Body == nil {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, bodyLimit))
	rest := resp.Body
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(b), rest), rest}
	var st struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(b, &st) == nil && st.Message != "" {
		return st.Message
	}
	return strings.TrimSpace(string(b))
}

// decisions are the log lines of one reconcile: its outcome, then each
// resource whose state, reason or error changed, in graph order.
func decisions(prev, next []state.Resource, in *state.Instance, took time.Duration, now time.Time) []state.LogLine {
	old := make(map[string]*state.Resource, len(prev))
	for i := range prev {
		old[prev[i].ID] = &prev[i]
	}
	head := state.LogLine{At: now, Level: "info", Message: fmt.Sprintf("reconcile %d: %s in %s", in.Reconciles, state.Phase(in.State).Word(), took.Round(time.Millisecond))}
	if in.Message != "" {
		head.KV = fmt.Sprintf("message=%q", in.Message)
	}
	if state.Phase(in.State).Class() == state.ClassFailed {
		head.Level = "error"
	}
	out := []state.LogLine{head}
	changed := 0
	for i := range next {
		r := &next[i]
		o := old[r.ID]
		if o != nil && o.State == r.State && o.WaitingFor == r.WaitingFor && o.Err == r.Err {
			continue
		}
		changed++
		from := "-"
		if o != nil {
			from = state.Phase(o.State).Word()
		}
		msg := fmt.Sprintf("%s: %s -> %s", r.ID, from, state.Phase(r.State).Word())
		if o != nil && o.State == r.State {
			msg = fmt.Sprintf("%s: %s", r.ID, state.Phase(r.State).Word()) // only the reason changed
		}
		l := state.LogLine{At: now, Level: "info", Message: msg}
		switch {
		case r.Err != "":
			l.Level, l.KV = "error", fmt.Sprintf("error=%q", r.Err)
		case r.WaitingFor != "":
			l.KV = fmt.Sprintf("why=%q", r.WaitingFor)
		}
		out = append(out, l)
	}
	if changed == 0 {
		out[0].Message += ", no resource changed"
	}
	return out
}
