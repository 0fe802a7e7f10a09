package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
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
	if out, err := exec.Command("tmux", append(s.socket, "kill-server")...).CombinedOutput(); err != nil {
		t.Fatalf("tmux kill-server: %v\n%s", err, out)
	}
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

type tmuxRun struct {
	t       *testing.T
	kube    kubernetes.Interface
	socket  []string
	session string
}

// startInTmux starts kroscope (with args) in a tmux server of its own, on
// a real API server.
func startInTmux(t *testing.T, args string) *tmuxRun {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		prereq.Missing(t, "tmux not found", "apt-get install tmux (.ci/run installs it)")
	}
	env := envtest.Start(t)
	s := &tmuxRun{t: t, kube: env.Clients(t).Kubernetes(), session: fmt.Sprintf("kroscope-lease-%d", os.Getpid())}
	s.socket = []string{"-L", s.session}
	cmd := prereq.Kroscope(t) + " --no-mouse --kubeconfig " + envtest.Kubeconfig(t, env.Config) + " " + args
	if out, err := exec.Command("tmux", append(s.socket, "new-session", "-d", "-s", s.session, "-x", "100", "-y", "30", cmd)...).CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", append(s.socket, "kill-server")...).Run() })
	return s
}

func (s *tmuxRun) holder() string {
	l, err := s.kube.CoordinationV1().Leases(lease.DefaultNamespace).Get(context.Background(), lease.DefaultName, metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

func (s *tmuxRun) screen() string {
	out, _ := exec.Command("tmux", append(s.socket, "capture-pane", "-p", "-t", s.session)...).Output()
	return string(out)
}

func (s *tmuxRun) waitFor(what string, cond func() bool) {
	s.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			s.t.Fatalf("timed out waiting for %s (holder %q); screen:\n%s", what, s.holder(), s.screen())
		}
		time.Sleep(200 * time.Millisecond)
	}
}
