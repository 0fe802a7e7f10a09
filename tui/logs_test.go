package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kroscope/kroscope/engine/state"
)

// tailing is the fixture with 60 log lines about team-a/shop, the last
// one long.
func tailing(n int) *state.Snapshot {
	s := fixture()
	for i := range n {
		msg := fmt.Sprintf("pass %02d: no resource changed", i)
		if i == n-1 {
			msg = fmt.Sprintf("pass %02d: deployment team-a/shop: applied spec.template.spec.containers[0].image nginx:1.27 -> nginx:1.28 (the user's edit) end-of-line", i)
		}
		s.Logs = append(s.Logs, state.LogLine{At: at(float64(i - n)), Level: "info", Message: msg, KV: "instance=team-a/shop"})
	}
	s.Version += uint64(n)
	return s
}

// TestLogsTailAndWrap: the Logs tab opened on the oldest line, did not
// follow, had no key to the newest, and cut long lines. It opens on the
// newest, follows new lines while at the end, < and > go to the oldest
// and the newest, and a long line wraps whole.
func TestLogsTailAndWrap(t *testing.T) {
	m, f := newTestModel(t, tailing(60), Options{}, 80, 24)
	press(m, "j", "l") // team-a/shop's logs
	out := plain(m.Frame())
	if !strings.Contains(out, "end-of-line") || strings.Contains(out, "pass 00") {
		t.Fatalf("the Logs tab does not open on the newest line, whole:\n%s", out)
	}
	press(m, "<")
	if out := plain(m.Frame()); !strings.Contains(out, "pass 00") {
		t.Errorf("< does not go to the oldest line:\n%s", out)
	}
	press(m, ">")
	next := tailing(61)
	f.set(next)
	m.Update(tickMsg{})
	if out := plain(m.Frame()); !strings.Contains(out, "pass 60") {
		t.Errorf("the Logs tab does not follow a new line:\n%s", out)
	}
}
