package state

import (
	"testing"
	"time"
)

func TestRememberErrorCountsClearsAndRestarts(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	m := RememberError(nil, "", "", t0)
	if m != nil {
		t.Fatalf("no error yet, got %+v", m)
	}
	m = RememberError(m, "boom 500", "deployment", t0)
	m2 := RememberError(m, "boom 503", "deployment", t0.Add(time.Second))
	if m.Attempts != 1 || m.Err != "boom 500" {
		t.Fatalf("the old memory was modified: %+v", m)
	}
	if m2.Attempts != 2 || m2.Err != "boom 503" || !m2.Since.Equal(t0) || !m2.At.Equal(t0.Add(time.Second)) {
		t.Fatalf("second failure: %+v", m2)
	}
	r := m2.WithRetry(200*time.Millisecond, t0.Add(time.Second))
	if r.Backoff != 200*time.Millisecond || !r.NextRetry.Equal(t0.Add(1200*time.Millisecond)) || m2.Backoff != 0 {
		t.Fatalf("retry: %+v (old %+v)", r, m2)
	}
	c := RememberError(r, "", "", t0.Add(2*time.Second))
	if c.Active() || c.Err != "boom 503" || c.Attempts != 2 || c.Resource != "deployment" || !c.NextRetry.IsZero() {
		t.Fatalf("cleared memory must keep the error and drop the retry: %+v", c)
	}
	if !r.Active() {
		t.Fatal("clearing modified the previous memory")
	}
	if again := RememberError(c, "", "", t0.Add(3*time.Second)); again != c {
		t.Fatalf("a second clean reconcile changed the memory: %+v", again)
	}
	n := RememberError(c, "new", "service", t0.Add(4*time.Second))
	if n.Attempts != 1 || !n.Since.Equal(t0.Add(4*time.Second)) || !n.Active() || n.Resource != "service" {
		t.Fatalf("a failure after a clear starts a new run: %+v", n)
	}
	if c.WithRetry(time.Second, t0) != c {
		t.Fatal("a cleared memory took a retry time")
	}
}
