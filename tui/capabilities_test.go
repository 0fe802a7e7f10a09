package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/kroscope/kroscope/engine/state"
)

// restricted is the fixture as jane2 sees it: a read-only Role in team-a
// (observe only), no access to the ingresses there, and a graph served
// without reading its CRD.
func restricted() *state.Snapshot {
	s := fixture()
	deny := func(verb, res string) state.Permission {
		return state.Permission{Why: "user jane2 may not " + verb + " " + res + " in team-a"}
	}
	ok := state.Permission{Allowed: true}
	s.Capabilities = state.Capabilities{User: "jane2", Kinds: []state.KindAccess{
		{Resource: "databases.kro.run", Namespace: "team-a", Observe: ok, Requeue: deny("patch", "databases.kro.run"), Delete: deny("delete", "databases.kro.run"), Edit: deny("update", "databases.kro.run")},
		{Resource: webapps, Namespace: "team-a", Observe: ok, Requeue: deny("patch", webapps), Delete: deny("delete", webapps), Edit: deny("update", webapps)},
	}}
	s.Watches = append(append([]state.Watch(nil), s.Watches...), state.Watch{Name: "ingresses.networking.k8s.io (children)", Forbidden: true,
		Resource: "ingresses.networking.k8s.io", Namespace: "team-a", Err: "ingresses.networking.k8s.io is forbidden", Since: at(-60)})
	s.Graphs = append([]state.Graph(nil), s.Graphs...)
	s.Graphs[1].Note = "cannot read CRD webapps.kro.run (forbidden): the kind is served (discovery); not applying it, not checking its owner or schema compatibility (they need cluster rights)"
	return s
}

// The header says what this user may do and what the API server refuses
// (a forbidden watch is no access, not a lost watch); the footer and help
// show the denied keys greyed with the reason.
func TestCapabilitiesHeaderAndHelp(t *testing.T) {
	m, _ := newTestModel(t, restricted(), Options{}, 160, 30)
	out := plain(m.View().Content)
	for _, want := range []string{
		"jane2 can observe; cannot requeue, delete, edit",
		"no access: ingresses.networking.k8s.io in team-a",
		"CRD checks skipped (no cluster rights)",
		"watches 4/4 (1 no access)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("header lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "WATCH LOST") {
		t.Errorf("a forbidden watch is not a lost one:\n%s", out)
	}
	t.Run("instances", func(t *testing.T) { golden.RequireEqual(t, out) })
	press(m, "?")
	help := plain(m.View().Content)
	if !strings.Contains(help, "delete (asks, lists what goes) (not allowed)") || !strings.Contains(help, "ctrl+d: user jane2 may not delete webapps.kro.run in team-a") {
		t.Errorf("help does not show delete disabled with the reason:\n%s", help)
	}
	t.Run("help", func(t *testing.T) { golden.RequireEqual(t, help) })
}

// The denied keys are greyed in the footer (the colour output), and keep
// their colour with full rights.
func TestCapabilitiesFooterGreyed(t *testing.T) {
	m, _ := newTestModel(t, restricted(), Options{}, 160, 30)
	full, _ := newTestModel(t, fixture(), Options{}, 160, 30)
	th := m.c.th
	greyed := th.Dim.Render("ctrl+d delete")
	if !strings.Contains(m.View().Content, greyed) {
		t.Errorf("the footer does not grey the denied delete")
	}
	if strings.Contains(full.View().Content, greyed) {
		t.Errorf("the footer greys delete for a user who may delete")
	}
}

// A denied key flashes the reason and never reaches the engine.
func TestDeniedKeysDoNotCallTheEngine(t *testing.T) {
	m, f := newTestModel(t, restricted(), Options{}, 160, 30)
	press(m, "ctrl+d")
	out := plain(m.View().Content)
	if !strings.Contains(out, "not allowed: user jane2 may not delete") {
		t.Errorf("delete does not flash the reason:\n%s", out)
	}
	if strings.Contains(out, "Cancel") {
		t.Errorf("a denied delete must not open the dialog:\n%s", out)
	}
	pressRun(t, m, "r", "R", "enter", "r", "ctrl+d")
	req, all, del := f.calls()
	if len(req) != 0 || all != 0 || len(del) != 0 {
		t.Errorf("denied keys called the engine: requeue %v, requeue all %d, delete %v", req, all, del)
	}
	// With full rights the same keys work.
	m2, f2 := newTestModel(t, fixture(), Options{}, 160, 30)
	pressRun(t, m2, "r")
	if req, _, _ := f2.calls(); len(req) != 1 {
		t.Errorf("requeue with full rights: %v", req)
	}
}

// A user who may not read the Lease does not know who holds it: the status
// line says so instead of "held by nobody".
func TestLeaseUnknownWithoutAccess(t *testing.T) {
	snap := restricted()
	snap.Mode = state.Mode{}
	snap.Capabilities.Lease = "user jane may not get the lease kube-system/kroscope"
	m, _ := newTestModel(t, snap, Options{}, 160, 30)
	out := plain(m.View().Content)
	if !strings.Contains(out, "observing (no access to the lease)") || strings.Contains(out, "held by nobody") ||
		!strings.Contains(out, "observing: user jane may not get the lease") {
		t.Errorf("status line:\n%s", out)
	}
	// Attached (the TUI's default), the user's actions go to the API
	// server: the header says attached, and that only reconciling is out
	// of reach.
	snap.Mode.Attached = true
	m, _ = newTestModel(t, snap, Options{}, 160, 30)
	out = plain(m.View().Content)
	if !strings.Contains(out, "attached (no access to the lease)") || strings.Contains(out, "attached to nobody") ||
		!strings.Contains(out, "not reconciling: user jane may not get the lease") {
		t.Errorf("attached status line:\n%s", out)
	}
	m, _ = newTestModel(t, snap, Options{}, 80, 24)
	if out := plain(m.View().Content); !strings.Contains(out, "● attached │") && !strings.Contains(out, "* attached |") {
		t.Errorf("attached status line at 80 columns:\n%s", out)
	}
}

// At 80×24 the help with a not-allowed section still fits the terminal:
// its reasons fold into one line naming the keys.
func TestHelpWithDeniedKeysFits80x24(t *testing.T) {
	m, _ := newTestModel(t, restricted(), Options{}, 80, 24)
	press(m, "?")
	out := plain(m.View().Content)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) > 24 {
		t.Fatalf("help is %d lines high at 80×24:\n%s", len(lines), out)
	}
	if !strings.Contains(out, "╯") || !strings.Contains(out, "Not allowed") || !strings.Contains(out, "pressing one says why") {
		t.Errorf("help at 80×24 lacks its bottom border or the not-allowed line:\n%s", out)
	}
}
