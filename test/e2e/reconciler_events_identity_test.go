package e2e

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/rest"

	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/test/envtest"
)

// eventWriters records the Impersonate-User of every Event write.
type eventWriters struct {
	next  http.RoundTripper
	mu    *sync.Mutex
	users *[]string
}

func (e *eventWriters) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet && strings.Contains(req.URL.Path, "/events") {
		e.mu.Lock()
		*e.users = append(*e.users, req.Header.Get("Impersonate-User"))
		e.mu.Unlock()
	}
	return e.next.RoundTrip(req)
}

// TestReconcilerEventsAsImpersonatedUser: with defaultServiceAccounts,
// the instance's Events are written as its ServiceAccount, like its
// children and status, not as kroscope's own identity.
func TestReconcilerEventsAsImpersonatedUser(t *testing.T) {
	var mu sync.Mutex
	var users []string
	r := newRig(t, chainGraph("RtEvents"), func(c *rigConfig) {
		c.sas = map[string]string{"*": "eventer"}
		cfg := rest.CopyConfig(envtest.Start(t).Config)
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &eventWriters{next: rt, mu: &mu, users: &users} })
		c.clientConfig = cfg
	})
	grant(t, r, "eventer", []rbacv1.PolicyRule{
		instanceRules(r),
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}},
	})
	r.create(chainInstance("RtEvents", "app"))
	r.untilState("app", reconciler.InstanceStateActive)
	r.deleteInstance("app") // the deletion is announced with an Event
	r.untilGone("app")
	user := "system:serviceaccount:" + r.ns + ":eventer"
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		n := len(users)
		got := append([]string(nil), users...)
		mu.Unlock()
		if n > 0 {
			for _, u := range got {
				if u != user {
					t.Errorf("an Event was written as %q, want %s (all: %q)", u, user, got)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no Event was written")
		}
		time.Sleep(200 * time.Millisecond)
	}
}
