package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/kroscope/kroscope/test/prereq"
)

// tmuxSession runs a command in a tmux server of its own (-L): a person's
// tmux on the same machine, and their kill-server, neither see nor stop it.
// The tests that drive the real binary's UI share it.
type tmuxSession struct {
	t      *testing.T
	socket []string
	name   string
}

// startTmux starts cmd in a w×h session named name (made unique to this
// process); the server is killed when the test ends.
func startTmux(t *testing.T, name string, w, h int, cmd string) *tmuxSession {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		prereq.Missing(t, "tmux not found", "apt-get install tmux (.ci/run installs it)")
	}
	s := &tmuxSession{t: t, name: fmt.Sprintf("%s-%d", name, os.Getpid())}
	s.socket = []string{"-L", s.name}
	s.run("new-session", "-d", "-s", s.name, "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), cmd)
	t.Cleanup(func() { _ = exec.Command("tmux", append(s.socket, "kill-server")...).Run() })
	return s
}

// run runs a tmux command on this server; a failure fails the test.
func (s *tmuxSession) run(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append(s.socket, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// screen is what the pane shows now ("" once the session is gone).
func (s *tmuxSession) screen() string {
	out, _ := exec.Command("tmux", append(s.socket, "capture-pane", "-p", "-t", s.name)...).Output()
	return string(out)
}

// keys types keys one at a time, apart, so an escape is not read as alt
// with the next key.
func (s *tmuxSession) keys(keys ...string) {
	s.t.Helper()
	for _, k := range keys {
		s.run("send-keys", "-t", s.name, k)
		time.Sleep(300 * time.Millisecond)
	}
}

// waitFor polls the screen until cond holds (two minutes at most) and
// returns that screen; more says what else to show when it times out.
func (s *tmuxSession) waitFor(what string, cond func(screen string) bool, more ...func() string) string {
	s.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		sc := s.screen()
		if cond(sc) {
			return sc
		}
		if time.Now().After(deadline) {
			extra := ""
			for _, m := range more {
				extra += m() + "\n"
			}
			s.t.Fatalf("timed out waiting for %s; %sscreen:\n%s", what, extra, sc)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// alive reports whether the session still runs (its command has not exited).
func (s *tmuxSession) alive() bool {
	return exec.Command("tmux", append(s.socket, "has-session", "-t", s.name)...).Run() == nil
}

// kill stops the tmux server: the command gets the hangup a closed
// terminal sends.
func (s *tmuxSession) kill() { s.run("kill-server") }

func contains(sub string) func(string) bool {
	return func(s string) bool { return strings.Contains(s, sub) }
}
