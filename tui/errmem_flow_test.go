package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/kroscope/kroscope/engine/state"
)

// only keeps the instances of snap with the given names.
func only(snap *state.Snapshot, names ...string) *state.Snapshot {
	out := *snap
	out.Instances = nil
	for _, in := range snap.Instances {
		for _, n := range names {
			if in.Key.Name == n {
				c := *in
				c.Resources = append([]state.Resource(nil), in.Resources...)
				out.Instances = append(out.Instances, &c)
			}
		}
	}
	return &out
}

// "A transient error clears in a second and leaves nothing ... e opens a
// resource that is now waiting": the cleared error is kept, dimmed, with its
// attempts, and e lands on the resource it named.
func TestNewUserClearedErrorIsKeptAndELandsOnIt(t *testing.T) {
	snap := only(fixture(), "blog")
	blog := snap.Instances[0]
	mem := &state.ErrorMemory{Err: "deployment: applying Deployment team-a/blog: Internal error occurred: etcdserver: request timed out (500)",
		Since: at(-10), At: at(-4), Attempts: 3, Cleared: at(-1), Resource: "deployment"}
	blog.LastError = mem
	res := *mem
	res.Resource = ""
	res.Err = "applying Deployment team-a/blog: Internal error occurred: etcdserver: request timed out (500)"
	blog.Resources[2].LastError = &res

	tm, _ := flowOver(t, snap, Options{}, 200, 40)
	send(tm, "e")
	var out string
	eventually(t, "the instance screen", func() bool { out = tmFrame(t, tm); return strings.Contains(out, "GRAPH") })
	if got := selectedNode(out); !strings.Contains(got, "deployment") {
		t.Fatalf("e landed on %q, want the resource the error named (deployment):\n%s", got, out)
	}
	for _, want := range []string{"Last error (cleared)", "after 3 attempts", "etcdserver: request timed out", "no instance in error now", "team-a/blog deployment"} {
		if !strings.Contains(out, want) {
			t.Fatalf("screen lacks %q:\n%s", want, out)
		}
	}
	finalFrame(t, tm)
}

// While an error holds, the inspector says how often it failed and when the
// next retry comes.
func TestNewUserErrorShowsAttemptsAndNextRetry(t *testing.T) {
	snap := only(fixture(), "api")
	api := snap.Instances[0]
	api.Resources[2].LastError = &state.ErrorMemory{Err: api.Resources[2].Err, Since: at(-30), At: at(-1), Attempts: 4,
		Backoff: 1600 * time.Millisecond, NextRetry: at(0.6)}
	api.LastError = &state.ErrorMemory{Err: api.Message, Since: at(-30), At: at(-1), Attempts: 4, Resource: "deployment"}

	tm, _ := flowOver(t, snap, Options{}, 200, 40)
	send(tm, "e")
	var out string
	eventually(t, "the instance screen", func() bool { out = tmFrame(t, tm); return strings.Contains(out, "GRAPH") })
	if got := selectedNode(out); !strings.Contains(got, "deployment") {
		t.Fatalf("e landed on %q:\n%s", got, out)
	}
	for _, want := range []string{"4 attempts since 11:59:30", "backoff 1.6s, next retry in 600ms", "error in team-b/api deployment"} {
		if !strings.Contains(out, want) {
			t.Fatalf("screen lacks %q:\n%s", want, out)
		}
	}
	finalFrame(t, tm)
}
