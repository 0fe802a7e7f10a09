package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kroscope/kroscope/engine/lease"
	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/prereq"
)

// TestClosedTerminalReleasesTheLease: closing kroscope's terminal (tmux
// sends SIGHUP) shuts it down as ctrl+c does, so it gives the Lease back.
// Killed outright by the hangup, it kept the Lease until it expired, and a
// kroscope started again meanwhile attached to the dead holder for good.
func TestClosedTerminalReleasesTheLease(t *testing.T) {
	rgd := filepath.Join(prereq.RepoRoot(), "examples", "webapp", "rgd.yaml")
	s := startInTmux(t, "--rgd "+rgd)
	s.waitFor("kroscope to hold the Lease", func() bool { return s.holder() != "" })
	s.waitFor("the UI", func() bool { return strings.Contains(s.screen(), "watches") })
	s.kill()
	s.waitFor("the Lease to be released", func() bool { return s.holder() == "" })
}

// TestFailedEngineReleasesTheLease: an engine that fails at start (no
// graphs to serve) stops its Lease campaign; it went on renewing the Lease
// under the error screen, and every other kroscope waited on it.
func TestFailedEngineReleasesTheLease(t *testing.T) {
	s := startInTmux(t, "")
	s.waitFor("the error screen", func() bool { return strings.Contains(s.screen(), "no graphs to serve") })
	s.waitFor("the Lease to be free", func() bool { return s.holder() == "" })
	time.Sleep(3 * time.Second) // a campaign still running would take it again
	if h := s.holder(); h != "" {
		t.Fatalf("the failed engine holds the Lease (%s)", h)
	}
}

// tmuxRun is kroscope in tmux on a real API server, with its Lease.
type tmuxRun struct {
	*tmuxSession
	kube kubernetes.Interface
}

// startInTmux starts kroscope (with args) in a tmux server of its own, on
// a real API server.
func startInTmux(t *testing.T, args string) *tmuxRun {
	t.Helper()
	env := envtest.Start(t)
	// --yes: these tests are about the Lease once taken; the question
	// before taking it has tests of its own (TestNothingWrittenBeforeTheUsersYes).
	cmd := prereq.Kroscope(t) + " --no-mouse --yes --kubeconfig " + envtest.Kubeconfig(t, env.Config) + " " + args
	return &tmuxRun{tmuxSession: startTmux(t, "kroscope-lease", 100, 30, cmd), kube: env.Clients(t).Kubernetes()}
}

func (s *tmuxRun) holder() string {
	l, err := s.kube.CoordinationV1().Leases(lease.DefaultNamespace).Get(context.Background(), lease.DefaultName, metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// waitFor waits for cond, showing the Lease's holder if it times out.
func (s *tmuxRun) waitFor(what string, cond func() bool) {
	s.t.Helper()
	s.tmuxSession.waitFor(what, func(string) bool { return cond() }, func() string { return fmt.Sprintf("holder %q;", s.holder()) })
}
