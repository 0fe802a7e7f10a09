package tui

// Flows for issue 13's "tried as a new user would": each drives the real
// program (teatest) the way a person would and reads the screen. They use
// only the program's public surface (NewModel, keys, frames), so they run
// unchanged against older versions of the package.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/kroscope/kroscope/engine/state"
)

// flowOver runs the program over snap at w×h with no config file.
func flowOver(t *testing.T, snap *state.Snapshot, o Options, w, h int) (*teatest.TestModel, *fakeBackend) {
	t.Helper()
	f := newFake(snap)
	if o.ConfigPath == "" {
		o.ConfigPath = "-"
	}
	if o.Theme == "" {
		o.Theme = "dark"
	}
	o.Now = func() time.Time { return fixedNow }
	tm := teatest.NewTestModel(t, NewModel(f, o), teatest.WithInitialTermSize(w, h), progOpts())
	t.Cleanup(func() { _ = tm.Quit() })
	return tm, f
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A config file with one bad value starts kroscope on the defaults, with a
// flash that names the file, the line and the problem in words.
func TestNewUserBadConfigStartsWithFlash(t *testing.T) {
	for _, c := range []struct {
		name, body string
		line       int
		want       string
	}{
		{"theme", "ascii: false\ntheme: solarized\n", 2, `theme: unknown theme "solarized"`},
		{"ascii", "theme: dark\nascii: maybe\n", 2, `ascii: "maybe" is not true or false`},
		{"action", "keys:\n  requeue: [\"r\"]\n  explode: [\"z\"]\n", 3, `keys.explode: unknown action`},
		{"key", "keys:\n  requeue: [\"F99\"]\n", 2, `keys.requeue: unknown key "F99"`},
		{"syntax", "theme: dark\nkeys: [\n", 2, "YAML syntax"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := writeConfig(t, c.body)
			tm, _ := flowOver(t, fixture(), Options{ConfigPath: path}, 220, 40)
			out := finalFrame(t, tm)
			if !strings.Contains(out, "NAMESPACE/NAME") {
				t.Fatalf("kroscope did not start on the defaults:\n%s", out)
			}
			where := fmt.Sprintf("%s:%d:", path, c.line)
			if !strings.Contains(out, where) || !strings.Contains(out, c.want) {
				t.Fatalf("flash does not say %q and %q:\n%s", where, c.want, out)
			}
			for _, jargon := range []string{"JSON", "unmarshal", "Go struct"} {
				if strings.Contains(out, jargon) {
					t.Fatalf("flash speaks %s:\n%s", jargon, out)
				}
			}
		})
	}
}

// docs/configuration.md's remap example: F5 as written in the file works, and the
// footer spells it as Bubble Tea does.
func TestNewUserReadmeRemapF5Works(t *testing.T) {
	path := writeConfig(t, "keys:\n  requeue: [\"F5\", \"r\"]\n")
	tm, f := flowOver(t, fixture(), Options{ConfigPath: path}, 100, 30)
	tm.Send(tea.KeyPressMsg{Code: tea.KeyF5})
	eventually(t, "a requeue by F5", func() bool { r, _, _ := f.calls(); return len(r) == 1 })
	out := finalFrame(t, tm)
	if !strings.Contains(out, "f5/r requeue") {
		t.Fatalf("footer does not show the normalised key:\n%s", out)
	}
}

// selectedNode is the graph line under the cursor glyph.
func selectedNode(frame string) string {
	for _, l := range strings.Split(frame, "\n") {
		if i := strings.Index(l, "▸ "); i >= 0 {
			return l[i:]
		}
	}
	return ""
}

// After a tab key, j/k still move between nodes and one esc goes back to
// the list.
func TestNewUserTabsKeepGraphCursorAndEscIsOneLevel(t *testing.T) {
	for _, k := range []string{"y", "t", "H", "L", "]"} {
		t.Run(k, func(t *testing.T) {
			tm, _ := flowOver(t, fixture(), Options{}, 120, 30)
			send(tm, "j", "enter", k, "j")
			if got := selectedNode(tmFrame(t, tm)); !strings.Contains(got, "secret") {
				t.Fatalf("after %s then j the cursor is on %q, want the second node (secret)", k, got)
			}
			send(tm, "k")
			if got := selectedNode(tmFrame(t, tm)); !strings.Contains(got, "config") {
				t.Fatalf("after k the cursor is on %q, want config", got)
			}
			send(tm, "esc")
			if out := finalFrame(t, tm); !strings.Contains(out, "NAMESPACE/NAME") {
				t.Fatalf("one esc after %s did not go back to the list:\n%s", k, out)
			}
		})
	}
}

// The graph's state column holds the longest state on screen at every
// width: no WAITING_FOR_R… cut.
func TestNewUserGraphStateColumnFits(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 48}, {220, 60}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			snap := fixture()
			snap.Instances[0].Resources[2].State = "WAITING_FOR_READINESS" // team-a/blog's deployment
			tm, _ := flowOver(t, snap, Options{}, size[0], size[1])
			send(tm, "enter")
			out := finalFrame(t, tm)
			if strings.Contains(out, "WAITING_FOR_R…") || !strings.Contains(out, "WAITING_FOR_READINESS") {
				t.Fatalf("state column cut or missing at %dx%d:\n%s", size[0], size[1], out)
			}
		})
	}
}

// The filter prompt shows its whole hint, not a reverse-video "t".
func TestNewUserFilterPromptShowsPlaceholder(t *testing.T) {
	tm, _ := flowOver(t, fixture(), Options{}, 100, 30)
	send(tm, "/")
	if out := finalFrame(t, tm); !strings.Contains(out, "/text, state:error") {
		t.Fatalf("filter prompt hides its placeholder:\n%s", out)
	}
}

// After filtering the cursor is on the first match, wherever it was.
func TestNewUserFilterPutsCursorOnFirstMatch(t *testing.T) {
	tm, _ := flowOver(t, fixture(), Options{}, 100, 30)
	send(tm, "j", "j", "j", "j") // team-c/cache
	tm.Type("/team-b")           // every prefix keeps cache's row until the last letter
	send(tm, "enter", "enter")
	if out := finalFrame(t, tm); !strings.Contains(out, "WebApp team-b/api") {
		t.Fatalf("after filtering, enter did not open the first match (team-b/api):\n%s", out)
	}
}

// The summary counts the rows the filter shows, in the rows' words.
func TestNewUserCountsFollowTheFilter(t *testing.T) {
	tm, _ := flowOver(t, fixture(), Options{}, 100, 30)
	tm.Type("/ns:team-b")
	send(tm, "enter")
	out := finalFrame(t, tm)
	if !regexp.MustCompile(`2/6 instances +\[ns:team-b\] +\S+ 1 ACTIVE +\S+ 1 ERROR`).MatchString(out) || strings.Contains(out, "DELETING") {
		t.Fatalf("counts do not follow the filter:\n%s", out)
	}
}

// liveList runs the program over a store and adds instances in the order given.
func liveList(t *testing.T, names ...string) *teatest.TestModel {
	t.Helper()
	store := state.NewStore()
	store.SetStartup(state.Startup{Done: true})
	tm := teatest.NewTestModel(t, NewModel(&storeBackend{Store: store}, Options{ConfigPath: "-", Theme: "dark"}), teatest.WithInitialTermSize(100, 30), progOpts())
	t.Cleanup(func() { _ = tm.Quit() })
	for _, n := range names {
		store.UpdateInstance(state.InstanceKey{Resource: webapps, Namespace: "team-a", Name: n}, func(in *state.Instance) {
			in.Kind, in.State = "WebApp", "ACTIVE"
		})
		eventually(t, n+" on screen", func() bool { return strings.Contains(tmFrame(t, tm), "team-a/"+n+" ") })
	}
	return tm
}

// The list opens at the top whatever arrived first.
func TestNewUserListOpensAtTop(t *testing.T) {
	tm := liveList(t, "zeta", "alpha")
	send(tm, "enter")
	if out := finalFrame(t, tm); !strings.Contains(out, "WebApp team-a/alpha ") {
		t.Fatalf("the cursor did not stay at the top (want team-a/alpha open):\n%s", out)
	}
}

// Names sort naturally: blog-7 before blog-69.
func TestNewUserNaturalSort(t *testing.T) {
	tm := liveList(t, "blog-69", "blog-7")
	out := finalFrame(t, tm)
	if i, j := strings.Index(out, "team-a/blog-7 "), strings.Index(out, "team-a/blog-69"); i < 0 || j < 0 || i > j {
		t.Fatalf("blog-7 does not sort before blog-69:\n%s", out)
	}
}

func wordsSnapshot() *state.Snapshot {
	snap := fixture()
	snap.Engine.QueueDepth, snap.Engine.BusyWorkers = 0, 0
	snap.Instances[0].Resources[3].WaitingFor = "waiting for deployment (waiting for readiness)" // blog's service
	return snap
}

// The summary counts the same words the rows show.
func TestNewUserSummaryUsesRowWords(t *testing.T) {
	tm, _ := flowOver(t, wordsSnapshot(), Options{}, 160, 48)
	out := finalFrame(t, tm)
	for _, want := range []string{"2 ACTIVE", "1 IN_PROGRESS", "1 ERROR", "1 DELETING"} {
		if !strings.Contains(out, want) {
			t.Fatalf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, " synced") || strings.Contains(out, " progress ") {
		t.Fatalf("summary uses other words than the rows:\n%s", out)
	}
}

// Nothing queued or running: the header says idle.
func TestNewUserHeaderSaysIdle(t *testing.T) {
	tm, _ := flowOver(t, wordsSnapshot(), Options{}, 160, 48)
	out := finalFrame(t, tm)
	// #38: "● idle" while an instance is IN_PROGRESS read as if all were
	// done; the engine waits on it.
	if !strings.Contains(out, "● waiting on 1 instance") || strings.Contains(out, "reconciling") || strings.Contains(out, "● idle") {
		t.Fatalf("header does not say what it waits on at queue 0:\n%s", out)
	}
}

// RECONCILED says how long ago, TOOK how long it took.
func TestNewUserReconciledExplained(t *testing.T) {
	tm, _ := flowOver(t, wordsSnapshot(), Options{}, 160, 48)
	out := finalFrame(t, tm)
	if !regexp.MustCompile(`RECONCILED +TOOK`).MatchString(out) || !regexp.MustCompile(`12s ago +84 ms`).MatchString(out) || strings.Contains(out, "12s 84ms") {
		t.Fatalf("the reconcile columns do not explain themselves:\n%s", out)
	}
}

// No line says "waiting for" twice.
func TestNewUserNoWaitingForWaitingFor(t *testing.T) {
	tm, _ := flowOver(t, wordsSnapshot(), Options{}, 160, 48)
	send(tm, "enter", "j", "j", "j") // blog: service, which waits for deployment
	out := strings.ToLower(finalFrame(t, tm))
	if !strings.Contains(out, "waiting for deployment") {
		t.Fatalf("the reason is not shown:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.Count(l, "waiting for") > 1 {
			t.Fatalf("a line repeats \"waiting for\": %q", l)
		}
	}
}

// A SKIPPED resource says why it is excluded.
func TestNewUserSkippedSaysExcluded(t *testing.T) {
	tm, _ := flowOver(t, wordsSnapshot(), Options{}, 160, 48)
	send(tm, "j", "enter", "j", "j", "j", "j") // shop: ingress
	if out := finalFrame(t, tm); !strings.Contains(out, "excluded: includeWhen ${schema.spec.ingress.enabled} is false") {
		t.Fatalf("a SKIPPED resource does not say why it is excluded:\n%s", out)
	}
}

// Sorting keeps the cursor on the row the user chose (#38: it moved to
// row 1); the same sort key again reverses the order, with an arrow in
// the column header.
func TestNewUserSortCursorAndReverse(t *testing.T) {
	tm, _ := flowOver(t, fixture(), Options{}, 100, 30)
	send(tm, "j", "j", "j", "s", "enter") // team-b/orders; s: sort by state, worst first
	if out := tmFrame(t, tm); !strings.Contains(out, "Database team-b/orders") {
		t.Fatalf("after sorting, enter did not open the row chosen before (team-b/orders):\n%s", out)
	}
	send(tm, "esc", "S") // state again: reversed
	out := finalFrame(t, tm)
	if !strings.Contains(out, "STATE↓") {
		t.Fatalf("the reversed sort has no arrow:\n%s", out)
	}
	if i, j := strings.Index(out, "team-b/api"), strings.Index(out, "team-a/shop"); i < j {
		t.Fatalf("S after s did not reverse the state order:\n%s", out)
	}
}
