package envtest

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// audit: the next shared API server writes an audit log (EnableAudit).
var audit atomic.Bool

// EnableAudit makes the API server this test binary starts (call it from
// TestMain, before Run) log every write it receives, with who sent it:
// tests that count a process's writes at the server (not in the process
// that sends them) read it with AuditWrites. Reads are not logged.
func EnableAudit() { audit.Store(true) }

// auditPolicy logs every request but reads, at the Metadata level (who,
// what, when, the answer), once the response is sent.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: None
    verbs: [get, list, watch]
  - level: Metadata
`

// configureAudit writes the policy into dir and returns the API server's
// flags for it, and the log's path.
func configureAudit(dir string) (flags map[string]string, log string, err error) {
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, "", err
	}
	log = filepath.Join(dir, "audit.log")
	return map[string]string{
		"audit-policy-file": policy, "audit-log-path": log, "audit-log-format": "json",
		// Each event is written as the request ends, so a test reads every
		// write the server answered so far.
		"audit-log-mode": "blocking",
	}, log, nil
}

// AuditEvent is one write the API server received.
type AuditEvent struct {
	Verb string
	// User is the identity the request acts as: the impersonated user
	// when there is one, else the authenticated one.
	User      string
	Resource  string
	Namespace string
	Name      string
	Code      int
	URI       string
	Received  time.Time
}

// AuditWrites returns the writes the API server logged so far, in order
// (EnableAudit must have been called before the server started).
func (e *Env) AuditWrites(t testing.TB) []AuditEvent {
	t.Helper()
	if e.auditLog == "" {
		t.Fatal("the test API server keeps no audit log: call envtest.EnableAudit in TestMain")
	}
	f, err := os.Open(e.auditLog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []AuditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev struct {
			Verb       string `json:"verb"`
			RequestURI string `json:"requestURI"`
			User       struct {
				Username string `json:"username"`
			} `json:"user"`
			ImpersonatedUser *struct {
				Username string `json:"username"`
			} `json:"impersonatedUser"`
			ObjectRef *struct {
				Resource  string `json:"resource"`
				Namespace string `json:"namespace"`
				Name      string `json:"name"`
			} `json:"objectRef"`
			ResponseStatus *struct {
				Code int `json:"code"`
			} `json:"responseStatus"`
			Received time.Time `json:"requestReceivedTimestamp"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("audit log %s: %v", e.auditLog, err)
		}
		a := AuditEvent{Verb: ev.Verb, User: ev.User.Username, URI: ev.RequestURI, Received: ev.Received}
		if ev.ImpersonatedUser != nil {
			a.User = ev.ImpersonatedUser.Username
		}
		if r := ev.ObjectRef; r != nil {
			a.Resource, a.Namespace, a.Name = r.Resource, r.Namespace, r.Name
		}
		if ev.ResponseStatus != nil {
			a.Code = ev.ResponseStatus.Code
		}
		out = append(out, a)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
