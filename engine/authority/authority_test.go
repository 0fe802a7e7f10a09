package authority

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kroscope/kroscope/engine/krodetect"
	"github.com/kroscope/kroscope/engine/lease"
)

// conditions are the words of the "when" column of docs/architecture.md's
// "Who may write, when" table.
var conditions = map[string]func(Facts) bool{
	"`--observe`":       func(f Facts) bool { return f.Observe },
	"kro active":        func(f Facts) bool { return !f.Kro.MayWrite() },
	"no Lease needed":   func(f Facts) bool { return f.NoLease },
	"holding the Lease": func(f Facts) bool { return f.Leading },
	"no Lease client":   func(f Facts) bool { return !f.LeaseClient },
	"held elsewhere":    func(f Facts) bool { return f.Holder != "" && f.Holder != f.Identity },
	"following":         func(f Facts) bool { return f.Following },
	"Lease denied":      func(f Facts) bool { return f.LeaseDenied != "" },
	"`--attach`":        func(f Facts) bool { return f.Attach },
	"another kroscope":  func(f Facts) bool { return otherWriterLine(f) != "" },
	"awaiting your yes": func(f Facts) bool { return AwaitingConsent(f) },
	"otherwise":         func(Facts) bool { return true },
}

type docRow struct {
	when  []string
	cells []string // reconciles write, campaigns, requeue, delete, mode
}

// docTable reads the "Who may write, when" table.
func docTable(t *testing.T) []docRow {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "## Who may write, when\n")
	if !ok {
		t.Fatal(`docs/architecture.md has no "Who may write, when" section`)
	}
	var rows []docRow
	for _, line := range strings.Split(sec, "\n") {
		if !strings.HasPrefix(line, "| ") {
			if len(rows) > 0 {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 6 {
			t.Fatalf("docs/architecture.md: a row of the table has %d cells, want 6: %s", len(cells), line)
		}
		if cells[0] == "when" {
			continue
		}
		rows = append(rows, docRow{when: strings.Split(cells[0], ", "), cells: cells[1:]})
	}
	if len(rows) == 0 {
		t.Fatal("docs/architecture.md: the who-may-write table has no rows")
	}
	return rows
}

// matches: every condition of the row holds for f.
func (r docRow) matches(t *testing.T, f Facts) bool {
	for _, w := range r.when {
		c, ok := conditions[w]
		if !ok {
			t.Fatalf("docs/architecture.md: unknown condition %q in the who-may-write table", w)
		}
		if !c(f) {
			return false
		}
	}
	return true
}

// cells renders a decision as the table's cells.
func cells(d Decision) []string {
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	requeue := map[Route]string{Local: "local queue", Cluster: "annotation", Refused: "refused"}[d.Requeue.Route]
	if d.Requeue.Route == Local && !d.GateOpen {
		requeue += ", read-only"
	}
	del := map[Route]string{Local: "API delete", Cluster: "API delete as you", Refused: "refused"}[d.Delete.Route]
	m := d.Mode
	if m.Holder != "" {
		m.Holder = "the holder"
	}
	return []string{yes(d.GateOpen), yes(d.Campaign), requeue, del, Word(m)}
}

// possible leaves out facts the engine never gathers together.
func possible(f Facts) bool {
	uses := !f.Observe && !f.NoLease && f.LeaseClient
	other := f.Holder != "" && f.Holder != f.Identity
	switch {
	case (f.Leading || f.Following || f.LeaseDenied != "" || f.Holder != "") && !uses:
		return false // the Lease is never looked at
	case f.Leading && (f.Following || f.LeaseDenied != "" || f.Holder != f.Identity):
		return false // leads only after campaigning, and says so
	case f.Holder == f.Identity && (f.Following || f.LeaseDenied != ""):
		return false // held here only after campaigning
	case other && !f.Following && f.LeaseDenied != "":
		return false // a holder is seen only by following or campaigning
	case f.HolderExpired && !f.Following:
		return false // only a followed holder expires
	case (f.Writers.Seen != nil || f.Writers.Unknown != "") && !uses:
		return false // the other kroscopes are looked for only with a Lease
	case f.Leading && f.Consent.Ask && !f.Consent.Given:
		return false // campaigns only once the user said yes
	case f.Consent.Given && !f.Consent.Ask:
		return false
	}
	return true
}

// writerCases: no other kroscope, one that writes the same instances
// under another Lease and took it first, and no way to tell.
var writerCases = []WriterFacts{
	{},
	{Lease: "kroscope-system/kroscope", Seen: []lease.Writer{
		{Lease: "team-a/kroscope", Holder: "other-team", Live: true, Acquired: time.Unix(100, 0)},
	}},
	{Lease: "kroscope-system/kroscope", Unknown: "forbidden to list Leases"},
}

var consentCases = []ConsentFacts{{}, {Ask: true, User: "jane"}, {Ask: true, Given: true, User: "jane"}}

// every calls fn with every combination of the facts.
func every(fn func(Facts)) {
	kro := []krodetect.Presence{krodetect.NeverSeen, krodetect.Absent, krodetect.TakenOver, krodetect.Present, krodetect.Unproven}
	for n := range 1 << 9 {
		bit := func(i int) bool { return n&(1<<i) != 0 }
		for _, holder := range []string{"", "me", "other"} {
			for _, p := range kro {
				for _, denied := range []string{"", "user jane may not update the lease"} {
					for _, w := range writerCases {
						for _, c := range consentCases {
							fn(Facts{Observe: bit(0), NoLease: bit(1), LeaseClient: bit(2), Running: bit(3), Leading: bit(4),
								Following: bit(5), HolderExpired: bit(6), Attach: bit(7), TakeOver: bit(8),
								Identity: "me", Holder: holder, Kro: krodetect.Verdict{Presence: p, Reason: "lease kro-system/kro"}, LeaseDenied: denied,
								Writers: w, Consent: c})
						}
					}
				}
			}
		}
	}
}

// TestDecideAgreesWithDocs: for every combination of the facts, the first
// row of the docs' table that matches says what Decide decides. A
// kroscope not running (before its startup checks, or stopping) decides
// the same but never campaigns.
func TestDecideAgreesWithDocs(t *testing.T) {
	rows := docTable(t)
	used := make([]bool, len(rows))
	n := 0
	every(func(f Facts) {
		if !possible(f) {
			return
		}
		n++
		d := Decide(f)
		if !f.Running {
			running := f
			running.Running = true
			want := Decide(running)
			want.Campaign = false
			if fmt.Sprint(d) != fmt.Sprint(want) {
				t.Fatalf("%+v: not running decides %+v, want as running without the campaign %+v", f, d, want)
			}
			return
		}
		for i, r := range rows {
			if !r.matches(t, f) {
				continue
			}
			used[i] = true
			if got := cells(d); strings.Join(got, " | ") != strings.Join(r.cells, " | ") {
				t.Errorf("facts %+v: Decide says | %s |, docs/architecture.md's row %q says | %s |",
					f, strings.Join(got, " | "), strings.Join(r.when, ", "), strings.Join(r.cells, " | "))
			}
			return
		}
		t.Fatalf("facts %+v match no row of docs/architecture.md's who-may-write table", f)
	})
	for i, u := range used {
		if !u {
			t.Errorf("docs/architecture.md's row %q is never reached", strings.Join(rows[i].when, ", "))
		}
	}
	t.Logf("%d combinations of facts checked", n)
}

// TestDecideConsistent: what holds across every combination, beside the
// table: an edit is allowed exactly when reconciles write, a refusal says
// why, and the mode shows the gate.
func TestDecideConsistent(t *testing.T) {
	every(func(f Facts) {
		d := Decide(f)
		if (d.Edit.Route == Local) != d.GateOpen || d.Edit.Route == Cluster {
			t.Fatalf("%+v: edit %+v with the gate open=%v", f, d.Edit, d.GateOpen)
		}
		if d.ApplyGraph != d.Delete {
			t.Fatalf("%+v: applying a graph %+v, deleting %+v", f, d.ApplyGraph, d.Delete)
		}
		for _, a := range []Action{d.Requeue, d.Delete, d.Edit, d.ApplyGraph} {
			if (a.Route == Refused) != (a.Why != "") {
				t.Fatalf("%+v: action %+v", f, a)
			}
		}
		if d.Mode.Reconciling != d.GateOpen || d.Mode.Forced != f.Observe || d.Mode.Attached != (d.Requeue.Route == Cluster) {
			t.Fatalf("%+v: mode %+v, decision %+v", f, d.Mode, d)
		}
		if f.Observe && (d.GateOpen || d.Campaign || d.UsesLease || d.Requeue.Route != Refused || d.Delete.Route != Refused || d.ApplyGraph.Route != Refused) {
			t.Fatalf("--observe: %+v", d)
		}
	})
}

// TestDecideWords: the reasons and notes a user reads.
func TestDecideWords(t *testing.T) {
	kro := krodetect.Verdict{Presence: krodetect.Present, Reason: "lease kro-system/kro held by kro-1"}
	for _, c := range []struct {
		name       string
		f          Facts
		requeue    string
		edit, note string
	}{
		{"observe", Facts{Observe: true, Identity: "me"}, "kroscope runs read-only (--observe)", "kroscope runs read-only (--observe)", ""},
		{"kro, no attach", Facts{Kro: kro, Identity: "me", LeaseClient: true}, "observing only (--attach=false) while kro may be reconciling this cluster", "observing while  holds the lease", ""},
		{"kro, attach", Facts{Kro: kro, Attach: true, Identity: "me", LeaseClient: true}, "", "observing while  holds the lease", KroRequeueNote},
		{"other holder", Facts{Holder: "pod-2", Identity: "me", LeaseClient: true}, "observing only (--attach=false) while pod-2 holds the lease", "observing while pod-2 holds the lease", ""},
		{"other holder, attach", Facts{Holder: "pod-2", Attach: true, Identity: "me", LeaseClient: true}, "", "observing while pod-2 holds the lease", "asked pod-2 through the kroscope.dev/requeue annotation"},
		{"denied, attach", Facts{LeaseDenied: "no", Attach: true, Identity: "me", LeaseClient: true}, "", "observing while  holds the lease", "wrote the kroscope.dev/requeue annotation for the lease holder (who it is, this user may not read)"},
	} {
		d := Decide(c.f)
		if d.Requeue.Why != c.requeue || d.Edit.Why != c.edit || d.Mode.RequeueNote != c.note {
			t.Errorf("%s: requeue %q, edit %q, note %q; want %q, %q, %q", c.name, d.Requeue.Why, d.Edit.Why, d.Mode.RequeueNote, c.requeue, c.edit, c.note)
		}
	}
}

// OtherWriter: of two live kroscopes that would write the same instances
// under different Leases, the one that took its Lease first writes.
func TestOtherWriter(t *testing.T) {
	at := func(s int64) time.Time { return time.Unix(s, 0) }
	mine := lease.Writer{Lease: "kroscope-system/kroscope", Holder: "me", Live: true, Acquired: at(200)}
	for _, c := range []struct {
		name  string
		scope string
		seen  []lease.Writer
		want  string
	}{
		{"alone", "", []lease.Writer{mine}, ""},
		{"my own Lease not seen yet", "", []lease.Writer{{Lease: "team-a/kroscope", Holder: "b", Live: true, Acquired: at(300)}}, "b"},
		{"an earlier holder, all namespaces", "team-a", []lease.Writer{mine, {Lease: "x/k", Holder: "b", Live: true, Acquired: at(100)}}, "b"},
		{"a later holder gives way to me", "", []lease.Writer{mine, {Lease: "x/k", Holder: "b", Live: true, Acquired: at(300)}}, ""},
		{"same time: the Lease's name decides", "", []lease.Writer{mine, {Lease: "a/k", Holder: "b", Live: true, Acquired: at(200)}}, "b"},
		{"same time, the other way", "", []lease.Writer{mine, {Lease: "z/k", Holder: "b", Live: true, Acquired: at(200)}}, ""},
		{"not live", "", []lease.Writer{mine, {Lease: "x/k", Holder: "b", Acquired: at(100)}}, ""},
		{"released", "", []lease.Writer{mine, {Lease: "x/k", Live: false, Acquired: at(100)}}, ""},
		{"other namespaces", "team-a", []lease.Writer{mine, {Lease: "x/k", Holder: "b", Scope: "team-b", Live: true, Acquired: at(100)}}, ""},
		{"the same namespace", "team-a", []lease.Writer{mine, {Lease: "x/k", Holder: "b", Scope: "team-a", Live: true, Acquired: at(100)}}, "b"},
		{"it serves all namespaces", "team-a", []lease.Writer{mine, {Lease: "x/k", Holder: "b", Scope: "", Live: true, Acquired: at(100)}}, "b"},
		{"I serve all namespaces", "", []lease.Writer{mine, {Lease: "x/k", Holder: "b", Scope: "team-b", Live: true, Acquired: at(100)}}, "b"},
		{"myself under another Lease name", "", []lease.Writer{mine, {Lease: "x/k", Holder: "me", Live: true, Acquired: at(100)}}, ""},
	} {
		o, ok := OtherWriter(WriterFacts{Lease: mine.Lease, Scope: c.scope, Seen: c.seen}, "me")
		if ok != (c.want != "") || o.Holder != c.want {
			t.Errorf("%s: OtherWriter = %+v, %v; want holder %q", c.name, o, ok, c.want)
		}
	}
	// Both sides decide from the same Leases: exactly one gives way.
	other := lease.Writer{Lease: "team-a/kroscope", Holder: "b", Live: true, Acquired: at(200)}
	both := []lease.Writer{mine, other}
	_, iGive := OtherWriter(WriterFacts{Lease: mine.Lease, Seen: both}, "me")
	_, heGives := OtherWriter(WriterFacts{Lease: other.Lease, Seen: both}, "b")
	if iGive == heGives {
		t.Errorf("two kroscopes with the same acquire time: I give way %v, the other %v; want exactly one", iGive, heGives)
	}
}
