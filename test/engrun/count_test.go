package engrun

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
)

type okRT struct{}

func (okRT) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: req}, nil
}

// Each kind of request lands in the counts it belongs to: Lease writes are
// writes, access reviews are not, Event writes are counted but not listed
// per user, the user is the impersonated one.
func TestCounterCounts(t *testing.T) {
	type want struct{ reqs, reads, writes, leases, deletes int64 }
	for _, tc := range []struct {
		method, path, user string
		want               want
		byUser             map[string][]string
	}{
		{"GET", "/api/v1/namespaces/a/configmaps", "", want{1, 1, 0, 0, 0}, map[string][]string{}},
		{"HEAD", "/api", "", want{1, 1, 0, 0, 0}, map[string][]string{}},
		{"POST", "/api/v1/namespaces/a/configmaps", "", want{1, 0, 1, 0, 0}, map[string][]string{"": {"POST /api/v1/namespaces/a/configmaps"}}},
		{"PUT", "/apis/coordination.k8s.io/v1/namespaces/a/leases/l", "", want{1, 0, 1, 1, 0}, map[string][]string{"": {"PUT /apis/coordination.k8s.io/v1/namespaces/a/leases/l"}}},
		{"POST", "/apis/coordination.k8s.io/v1/namespaces/a/leases", "", want{1, 0, 1, 1, 0}, map[string][]string{"": {"POST /apis/coordination.k8s.io/v1/namespaces/a/leases"}}},
		{"DELETE", "/api/v1/namespaces/a/configmaps/x", "sa", want{1, 0, 1, 0, 1}, map[string][]string{"sa": {"DELETE /api/v1/namespaces/a/configmaps/x"}}},
		{"POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "", want{1, 0, 0, 0, 0}, map[string][]string{}},
		{"POST", "/api/v1/namespaces/a/events", "sa", want{1, 0, 1, 0, 0}, map[string][]string{}},
	} {
		c := &Counter{}
		req := httptest.NewRequest(tc.method, "https://api"+tc.path, nil)
		if tc.user != "" {
			req.Header.Set("Impersonate-User", tc.user)
		}
		if _, err := c.Wrap(okRT{}).RoundTrip(req); err != nil {
			t.Fatal(err)
		}
		got := want{c.Requests(), c.Reads(), c.Writes(), c.LeaseWrites(), c.Deletes()}
		if got != tc.want {
			t.Errorf("%s %s: counts %+v, want %+v", tc.method, tc.path, got, tc.want)
		}
		if by := c.WritesBy(); !reflect.DeepEqual(by, tc.byUser) {
			t.Errorf("%s %s: by user %v, want %v", tc.method, tc.path, by, tc.byUser)
		}
		if n := len(c.FirstWrites()); int64(n) != tc.want.writes {
			t.Errorf("%s %s: %d writes named, want %d", tc.method, tc.path, n, tc.want.writes)
		}
	}
}

// Only the first ten writes are named; Reset starts again.
func TestCounterFirstWritesAndReset(t *testing.T) {
	c := &Counter{}
	rt := c.Wrap(okRT{})
	for range 12 {
		if _, err := rt.RoundTrip(httptest.NewRequest("PATCH", "https://api/api/v1/namespaces/a/configmaps/x", nil)); err != nil {
			t.Fatal(err)
		}
	}
	if n, w := len(c.FirstWrites()), c.Writes(); n != 10 || w != 12 {
		t.Errorf("%d writes named of %d, want 10 of 12", n, w)
	}
	c.Reset()
	if c.Writes() != 0 || c.Requests() != 0 || len(c.FirstWrites()) != 0 || len(c.WritesBy()) != 0 {
		t.Errorf("after Reset: %d writes, %d requests, %v, %v", c.Writes(), c.Requests(), c.FirstWrites(), c.WritesBy())
	}
}
