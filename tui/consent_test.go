package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/kroscope/kroscope/engine/authority"
)

// consenting is a backend that asks before it writes.
type consenting struct {
	*fakeBackend
	yes int
}

func (c *consenting) Consent() { c.yes++ }

// About to become the cluster's writer with the user's own credentials
// (no kroscope or kro reconciles it), the header says so and as whom,
// and W is the user's yes; before the question, and without it, W does
// nothing.
func TestHeaderAsksBeforeWritingAsTheUser(t *testing.T) {
	snap := fixture()
	d := authority.Decide(authority.Facts{LeaseClient: true, Running: true, Identity: "laptop_x1",
		Consent: authority.ConsentFacts{Ask: true, User: "jane@example.com"}})
	if d.Campaign || d.GateOpen || d.Mode.Ask == "" {
		t.Fatalf("the decision while asking: %+v", d)
	}
	snap.Mode = d.Mode
	b := &consenting{fakeBackend: newFake(snap)}
	m := newModel(b, Options{Theme: "dark", ConfigPath: "-", Now: func() time.Time { return fixedNow }})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 30})
	out := plain(m.View().Content)
	for _, want := range []string{"kroscope would write as jane@example.com", "W to reconcile", "observing until you say yes (W)"} {
		if !strings.Contains(out, want) {
			t.Errorf("the header lacks %q:\n%s", want, out)
		}
	}
	golden.RequireEqual(t, out)
	press(m, "W")
	if b.yes != 1 {
		t.Fatalf("W while asked: Consent called %d times, want once", b.yes)
	}

	// Not asked (another kroscope reconciles, or --yes): W is no yes.
	plainSnap := fixture()
	b2 := &consenting{fakeBackend: newFake(plainSnap)}
	m2 := newModel(b2, Options{Theme: "dark", ConfigPath: "-", Now: func() time.Time { return fixedNow }})
	m2.Update(tea.WindowSizeMsg{Width: 160, Height: 30})
	press(m2, "W")
	if b2.yes != 0 {
		t.Errorf("W while nothing is asked called Consent")
	}
	if strings.Contains(plain(m2.View().Content), "W to reconcile") {
		t.Errorf("the header asks though the engine does not")
	}
}
