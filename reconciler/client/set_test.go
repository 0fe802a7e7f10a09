package client

import (
	"testing"

	"k8s.io/client-go/rest"
)

func TestWithImpersonationFromConfig(t *testing.T) {
	s, err := NewSet(&rest.Config{Host: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.WithImpersonation("system:serviceaccount:ns:sa")
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Config().Impersonate.UserName; got != "system:serviceaccount:ns:sa" {
		t.Errorf("impersonated user %q", got)
	}
	if a.User() != "system:serviceaccount:ns:sa" || s.User() != "" {
		t.Errorf("users %q / %q", a.User(), s.User())
	}
	if a.RESTMapper() != s.RESTMapper() {
		t.Error("the REST mapper is not shared with the impersonated set")
	}
	b, _ := s.WithImpersonation("system:serviceaccount:ns:sa")
	if a != b {
		t.Error("impersonated sets are not cached")
	}
	if _, err := s.WithImpersonation(""); err == nil {
		t.Error("an empty user was accepted")
	}
	if _, err := NewSetFromClients(Clients{}).WithImpersonation("u"); err == nil {
		t.Error("a set without config or impersonate func impersonated")
	}
}

// MayWrite is the gate's answer, now, for the Set and the Sets acting as
// other users; a Set no gate was attached to may write.
func TestMayWriteAsksTheGate(t *testing.T) {
	s, err := NewSet(&rest.Config{Host: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	if !s.MayWrite() {
		t.Fatal("an ungated set may not write")
	}
	open := false
	s.GateWrites(func() bool { return open })
	a, err := s.WithImpersonation("system:serviceaccount:ns:sa")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []bool{false, true, false} {
		open = want
		if s.MayWrite() != want || a.MayWrite() != want {
			t.Errorf("gate open=%v: set says %v, impersonated set %v", want, s.MayWrite(), a.MayWrite())
		}
	}
}
