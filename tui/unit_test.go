package tui

import (
	"errors"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/theme"
)

func TestQueryMatch(t *testing.T) {
	snap := fixture()
	names := func(q string) string {
		var out []string
		for _, in := range snap.Instances {
			if parseQuery(q).match(in) {
				out = append(out, name(in))
			}
		}
		return strings.Join(out, " ")
	}
	for q, want := range map[string]string{
		"":                         "team-a/blog team-a/shop team-b/api team-b/orders team-c/cache team-c/legacy",
		"state:error":              "team-b/api",
		"state:active":             "team-a/shop team-b/orders",
		"state:synced":             "team-a/shop team-b/orders",
		"state:progress":           "team-a/blog",
		"kind:Database":            "team-b/orders team-c/cache",
		"kind:webapp ns:team-a":    "team-a/blog team-a/shop",
		"ns:team-c":                "team-c/cache team-c/legacy",
		"SHOP":                     "team-a/shop",
		"invalid":                  "team-b/api",
		"state:error state:active": "team-a/shop team-b/api team-b/orders",
		"ns:nowhere":               "",
	} {
		if got := names(q); got != want {
			t.Errorf("filter %q = %q, want %q", q, got, want)
		}
	}
}

func TestLayoutTree(t *testing.T) {
	in := fixture().Instances[1] // team-a/shop
	order, prefix, needs := layoutTree(in, "├─ ", "└─ ", "│  ", "   ")
	got := make([]string, len(order))
	for i := range order {
		got[i] = prefix[i] + order[i]
		if needs[i] != "" {
			got[i] += " (" + needs[i] + ")"
		}
	}
	want := []string{"config", "secret", "└─ deployment (needs: config, secret)", "   └─ service", "      └─ ingress (needs: service, config)"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("tree:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Siblings get ├─ and the vertical bar continues under them.
	fan := &state.Instance{Resources: []state.Resource{{ID: "a"}, {ID: "b", Dependencies: []string{"a"}}, {ID: "c", Dependencies: []string{"a"}}, {ID: "d", Dependencies: []string{"b", "missing"}}}}
	order, prefix, _ = layoutTree(fan, "├─ ", "└─ ", "│  ", "   ")
	got = got[:0]
	for i := range order {
		got = append(got, prefix[i]+order[i])
	}
	if s := strings.Join(got, "|"); s != "a|├─ b|│  └─ d|└─ c" {
		t.Fatalf("fan-out tree = %q", s)
	}
}

func TestDeletePlanReverseTopologicalWithoutExternals(t *testing.T) {
	snap := fixture()
	plan, kept := deletePlan(snap.Instances[3], theme.ASCIIGlyphs) // team-b/orders: pvc, cluster (external), statefulset
	want := []string{"1. statefulset -> StatefulSet team-b/orders", "2. pvc -> PersistentVolumeClaim team-b/orders-data", "3. the instance Database team-b/orders"}
	if strings.Join(plan, "\n") != strings.Join(want, "\n") {
		t.Fatalf("plan:\n%s", strings.Join(plan, "\n"))
	}
	if strings.Join(kept, ",") != "cluster" {
		t.Fatalf("kept = %v", kept)
	}
	// Skipped resources were never created and are not listed.
	plan, _ = deletePlan(snap.Instances[1], theme.ASCIIGlyphs)
	if strings.Contains(strings.Join(plan, "\n"), "ingress") || !strings.HasPrefix(plan[0], "1. service") {
		t.Fatalf("shop plan:\n%s", strings.Join(plan, "\n"))
	}
}

func TestSecretMaskedUntilRevealed(t *testing.T) {
	th := theme.Must(theme.Options{Name: "dark"})
	r := fixture().Instances[1].Resource("secret")
	for _, mode := range []yamlMode{yamlDesired, yamlObserved, yamlDiff} {
		s := strings.Join(yamlView(th, r, mode, false), "\n")
		if strings.Contains(s, "hunter2") || strings.Contains(s, "aHVudGVyMg==") {
			t.Fatalf("%s view leaks the secret:\n%s", mode, s)
		}
	}
	if s := strings.Join(yamlView(th, r, yamlObserved, true), "\n"); !strings.Contains(s, "aHVudGVyMg==") {
		t.Fatalf("revealed view hides the data:\n%s", s)
	}
	// The original object is not modified by masking.
	if r.DesiredObject()["stringData"].(map[string]any)["password"] != "hunter2" {
		t.Fatal("masking modified the snapshot")
	}
}

func TestObservedDropsManagedFields(t *testing.T) {
	th := theme.Must(theme.Options{Name: "dark"})
	r := fixture().Instances[1].Resource("config")
	if s := strings.Join(yamlView(th, r, yamlObserved, false), "\n"); strings.Contains(s, "managedFields") {
		t.Fatalf("observed YAML shows managedFields:\n%s", s)
	}
}

func TestTimelineMarksSlowest(t *testing.T) {
	th := theme.Must(theme.Options{Name: "dark", ASCII: true})
	out := strings.Join(timeline(th, fixture().Instances[3], 80, fixedNow), "\n")
	if !strings.Contains(out, "slowest: statefulset (1m0s)") {
		t.Fatalf("timeline:\n%s", out)
	}
	// Not yet ready: the bar runs to now and says so.
	out = strings.Join(timeline(th, fixture().Instances[0], 80, fixedNow), "\n")
	if !strings.Contains(out, "20.0s+") || !strings.Contains(out, "still rolling out") {
		t.Fatalf("open timeline:\n%s", out)
	}
	// A FAILED instance is not rolling out: its timeline says it stopped.
	failed := *fixture().Instances[0]
	failed.State = "FAILED"
	out = strings.Join(timeline(th, &failed, 80, fixedNow), "\n")
	if strings.Contains(out, "still rolling out") || !strings.Contains(out, "stopped: the instance FAILED") {
		t.Fatalf("a FAILED instance's timeline:\n%s", out)
	}
	if got := timeline(th, &state.Instance{}, 80, fixedNow); len(got) != 1 || !strings.Contains(got[0], "nothing applied") {
		t.Fatalf("empty timeline = %q", got)
	}
}

func TestLoadConfigErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if c, probs := LoadConfig(filepath.Join(dir, "absent.yaml")); probs != nil || c.Theme != "" {
		t.Fatalf("missing file: %v %+v", probs, c)
	}
	for file, want := range map[string]string{
		write("bad-theme.yaml", "theme: sepia\n"):                 `:1: theme: unknown theme "sepia"`,
		write("bad-field.yaml", "theme: dark\ncolour: red\n"):     `:2: colour: unknown setting`,
		write("bad-key.yaml", "keys:\n  jump: [\"j\"]\n"):         ":2: keys.jump: unknown action",
		write("empty-key.yaml", "keys:\n  quit: []\n"):            ":2: keys.quit: no keys given",
		write("bad-keyname.yaml", "keys:\n  quit: [\"ctrl+\"]\n"): `:2: keys.quit: key "ctrl+" has no key`,
		write("bad-mod.yaml", "keys:\n  quit: [\"hyperx+q\"]\n"):  `:2: keys.quit: unknown modifier "hyperx"`,
		write("bad-yaml.yaml", "keys: [\n"):                       ": YAML syntax:",
		write("bad-ascii.yaml", "ascii: maybe\n"):                 `:1: ascii: "maybe" is not true or false`,
		write("not-a-map.yaml", "- a\n"):                          ":1: want a mapping",
	} {
		_, probs := LoadConfig(file)
		if len(probs) != 1 || !strings.Contains(probs[0].String(), want) || !strings.HasPrefix(probs[0].String(), file) {
			t.Errorf("%s: problems %v, want one naming the file and containing %q", filepath.Base(file), probs, want)
		}
	}
	// The good entries of a file with a bad one still apply.
	c, probs := LoadConfig(write("mixed.yaml", "theme: light\nascii: true\nkeys:\n  delete: [\"Ctrl+X\"]\n  requeue: [\"F5\", \"r\"]\n  bogus: [\"z\"]\n"))
	if len(probs) != 1 || c.Theme != "light" || !c.ASCII || c.Keys["delete"][0] != "ctrl+x" || c.Keys["requeue"][0] != "f5" {
		t.Fatalf("mixed config: %v %+v", probs, c)
	}
}

func TestNormaliseKey(t *testing.T) {
	for in, want := range map[string]string{
		"F5": "f5", "f12": "f12", "Ctrl+X": "ctrl+x", "ctrl+shift+A": "ctrl+shift+A", "Escape": "esc", "ESC": "esc",
		"PageDown": "pgdown", "pgup": "pgup", " ": "space", "G": "G", "g": "g", "?": "?", "shift+Tab": "shift+tab",
		"alt+ctrl+k": "ctrl+alt+k", "Enter": "enter", "ctrl++": "ctrl++",
	} {
		if got, err := normaliseKey(in); err != nil || got != want {
			t.Errorf("normaliseKey(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "F64", "f0", "PF5", "ctrl+", "super+duper", "hyperx+q", "enterr"} {
		if got, err := normaliseKey(bad); err == nil {
			t.Errorf("normaliseKey(%q) = %q, want an error", bad, got)
		}
	}
}

func TestDeleteErrorIsFlashed(t *testing.T) {
	m, f := newTestModel(t, fixture(), Options{}, 80, 24)
	f.deleteErr = errors.New("forbidden: user cannot delete webapps")
	press(m, "ctrl+d", "right")
	_, cmd := m.Update(keyMsg("enter"))
	if cmd == nil {
		t.Fatal("confirm returned no command")
	}
	m.Update(cmd())
	if !m.flash.isErr || !strings.Contains(m.flash.text, "forbidden") || !strings.Contains(m.flash.text, "team-a/blog") {
		t.Fatalf("flash = %q (err %v)", m.flash.text, m.flash.isErr)
	}
}

func TestRowCacheKeyedByVersion(t *testing.T) {
	m, _ := newTestModel(t, fixture(), Options{}, 120, 30)
	first := m.Frame()
	e, ok := listOf(m).table.cache[fixture().Instances[1].Key]
	if !ok {
		t.Fatal("row not cached")
	}
	listOf(m).lines = nil // force a redraw: the row must come from the cache
	listOf(m).prepare()
	again := m.Frame()
	if e2 := listOf(m).table.cache[fixture().Instances[1].Key]; first != again || e2.line != e.line || e2.stamp != e.stamp {
		t.Fatal("unchanged instance was re-rendered")
	}
	// A new Version re-renders the row.
	snap := fixture()
	shop := *snap.Instances[1]
	shop.Version, shop.State, shop.Message = 99, "ERROR", "boom"
	snap.Instances[1] = &shop
	snap.Version++
	m.c.b.(*fakeBackend).snap = snap
	m.Update(flushMsg{})
	if out := plain(m.Frame()); !strings.Contains(out, "boom") {
		t.Fatalf("new version not shown:\n%s", out)
	}
}

func TestClickSelectsRowAndNode(t *testing.T) {
	m, _ := newTestModel(t, fixture(), Options{}, 120, 30)
	m.Frame()
	// Rows start under status, counts and the table header.
	// Rows start under the status line, the counts and the table header.
	m.Update(mouseClick(5, m.bodyTop+2+2))
	if l := listOf(m); l.table.cursor != 2 || l.table.sel.Name != "api" {
		t.Fatalf("click selected row %d (%s)", l.table.cursor, l.table.sel.Name)
	}
	press(m, "enter")
	// The graph's nodes start under the header and the graph's title.
	m.Update(mouseClick(4, m.bodyTop+2+3)) // node index 3 (service)
	if id := detailOf(m).graph.nodeID; id != "service" {
		t.Fatalf("click selected node %q", id)
	}
}

func TestCoalescesBurstIntoOneRefresh(t *testing.T) {
	m, f := newTestModel(t, fixture(), Options{FrameInterval: time.Hour}, 80, 24)
	m.feed.sub = f.ch
	m.feed.lastFlush = time.Now()
	f.snap = fixture()
	f.snap.Version = 500
	for range 10 {
		_, cmd := m.Update(changedMsg{})
		if cmd == nil {
			t.Fatal("change did not re-arm the subscription")
		}
	}
	if m.snap.Version == 500 {
		t.Fatal("a change inside the window refreshed at once")
	}
	if !m.feed.flushWait {
		t.Fatal("no flush scheduled")
	}
	m.Update(flushMsg{})
	if m.snap.Version != 500 {
		t.Fatal("flush did not take the new snapshot")
	}
}

func bigInstance(n int) *state.Snapshot {
	snap := fixture()
	in := *snap.Instances[1]
	in.Resources = nil
	for i := range n {
		r := state.Resource{ID: fmt.Sprintf("res%02d", i), Kind: "ConfigMap", Name: fmt.Sprintf("cm-%02d", i), State: "SYNCED"}
		if i > 0 {
			r.Dependencies = []string{fmt.Sprintf("res%02d", i-1)}
		}
		in.Resources = append(in.Resources, r)
	}
	long := make([]string, 60)
	for i := range long {
		long[i] = fmt.Sprintf("error line %02d", i)
	}
	in.Resources[n-1].State, in.Resources[n-1].Err = "ERROR", strings.Join(long, "\n")
	in.Version = 77
	snap.Instances[1] = &in
	return snap
}

func TestGraphScrollsAt80x24(t *testing.T) {
	m, _ := newTestModel(t, bigInstance(40), Options{}, 80, 24)
	press(m, "j", "enter")
	for range 30 {
		press(m, "j")
	}
	out := plain(m.Frame())
	if !strings.Contains(out, "res30") || strings.Contains(out, "res00 ") {
		t.Fatalf("graph did not scroll to the cursor:\n%s", out)
	}
	if id := detailOf(m).graph.nodeID; id != "res30" {
		t.Fatalf("cursor on %s", id)
	}
	for i, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if w := len([]rune(l)); w > 80 {
			t.Fatalf("line %d too wide (%d): %q", i, w, l)
		}
	}
}

func TestLongErrorScrolls(t *testing.T) {
	m, _ := newTestModel(t, bigInstance(5), Options{}, 80, 24)
	press(m, "j", "enter", "e") // e selects the failed node and shows its error
	out := plain(m.Frame())
	if !strings.Contains(out, "error line 00") || strings.Contains(out, "error line 59") {
		t.Fatalf("error view start:\n%s", out)
	}
	press(m, "pgdown", "pgdown", "pgdown", "pgdown", "pgdown", "pgdown", "pgdown", "pgdown")
	out = plain(m.Frame())
	if !strings.Contains(out, "error line 59") {
		t.Fatalf("error view did not scroll to the end:\n%s", out)
	}
}

func TestBackgroundColourPicksPalette(t *testing.T) {
	f := newFake(fixture())
	m := newModel(f, Options{ConfigPath: "-", Now: func() time.Time { return fixedNow }})
	if m.c.th.P != theme.Must(theme.Options{Name: theme.Dark}).P {
		t.Fatal("auto theme does not start dark")
	}
	m.Update(tea.BackgroundColorMsg{Color: color.White})
	if m.c.th.P != theme.Must(theme.Options{Name: theme.Light}).P {
		t.Fatal("a light background did not switch to the light palette")
	}
	// An explicit theme ignores the terminal.
	m2 := newModel(f, Options{ConfigPath: "-", Theme: "high-contrast"})
	m2.Update(tea.BackgroundColorMsg{Color: color.White})
	if m2.c.th.Name != theme.HighContrast {
		t.Fatal("explicit theme replaced")
	}
}

func TestFlashExpires(t *testing.T) {
	now := fixedNow
	m, _ := newTestModel(t, fixture(), Options{}, 80, 24)
	m.c.opts.Now = func() time.Time { return now }
	press(m, "r")
	if m.flash.text == "" {
		t.Fatal("no flash")
	}
	now = now.Add(flashTTL / 2)
	m.Update(tickMsg{})
	if m.flash.text == "" {
		t.Fatal("flash expired too early")
	}
	now = now.Add(flashTTL)
	m.Update(tickMsg{})
	if m.flash.text != "" {
		t.Fatalf("flash %q did not expire", m.flash.text)
	}
}

func TestDeepChainKeepsNamesVisible(t *testing.T) {
	m, _ := newTestModel(t, bigInstance(40), Options{}, 80, 24)
	press(m, "j", "enter", "G")
	out := plain(m.Frame())
	if !strings.Contains(out, "res39  ConfigMap cm-39") {
		t.Fatalf("the deepest node's name is cut:\n%s", out)
	}
}

func TestShortNameKeepsTheName(t *testing.T) {
	in := &state.Instance{Key: state.InstanceKey{Namespace: "testtuishowsrealengine-lq7rz", Name: "shown"}}
	if got := shortName(in, 20, "…"); got != "testtuishowsr…/shown" {
		t.Fatalf("shortName = %q", got)
	}
	if got := shortName(in, 40, "…"); got != "testtuishowsrealengine-lq7rz/shown" {
		t.Fatalf("shortName = %q", got)
	}
}

// TestClusterScopedInstanceHasNoNamespace: a cluster-scoped instance is
// shown by its name alone, in the table and when it is gone.
func TestClusterScopedInstanceHasNoNamespace(t *testing.T) {
	in := &state.Instance{Key: state.InstanceKey{Name: "tenant-a"}}
	if got := shortName(in, 40, "…"); got != "tenant-a" {
		t.Fatalf("shortName = %q", got)
	}
	if got := name(in); got != "tenant-a" {
		t.Fatalf("name = %q", got)
	}
}

func TestClickTabBar(t *testing.T) {
	m, _ := newTestModel(t, fixture(), Options{}, 160, 48)
	press(m, "j", "enter")
	y := m.bodyTop + 1 // under the header
	bar := strings.Split(plain(m.Frame()), "\n")[y]
	x := strings.Index(bar, "Timeline")
	if x < 0 {
		t.Fatalf("no tab bar on line %d: %q", y, bar)
	}
	m.Update(mouseClick(len([]rune(bar[:x]))+2, y))
	if d := detailOf(m); d.detail.tab != tabTimeline || d.graph.nodeID != "config" {
		t.Fatalf("tab = %s, node = %s", d.detail.tab, d.graph.nodeID)
	}
}

// TestChangesBeforeInitAreShown: a change between NewModel and Init (the
// program starting) signals no subscriber; Init must catch up.
func TestChangesBeforeInitAreShown(t *testing.T) {
	store := state.NewStore()
	store.SetStartup(state.Startup{Done: true})
	m := newModel(&storeBackend{Store: store}, Options{ConfigPath: "-", Theme: "dark"})
	store.UpdateInstance(state.InstanceKey{Resource: webapps, Namespace: "early", Name: "bird"}, func(in *state.Instance) { in.State = "ACTIVE" })
	m.Init()
	if !strings.Contains(plain(m.Frame()), "early/bird") {
		t.Fatal("a change made before Init is not on screen")
	}
	store.UpdateInstance(state.InstanceKey{Resource: webapps, Namespace: "late", Name: "bird"}, func(in *state.Instance) { in.State = "ACTIVE" })
	m.Update(tickMsg{})
	if !strings.Contains(plain(m.Frame()), "late/bird") {
		t.Fatal("the clock tick did not pick up a change")
	}
	m.feed.unsub()
}

func TestAgeColumnFitsItsCells(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		created time.Time
		want    string
	}{
		{time.Time{}, "-"},
		{now.Add(-341 * time.Millisecond), "0s"},
		{now.Add(-5 * time.Second), "5s"},
		{now.Add(-3 * time.Hour), "3h"},
	} {
		if got := ageOf(now, tc.created); got != tc.want {
			t.Errorf("ageOf(%v) = %q, want %q", now.Sub(tc.created), got, tc.want)
		}
	}
}

// An instance deleted while it is open: one esc goes back, whichever pane
// had the focus.
func TestEscLeavesAGoneInstanceAtOnce(t *testing.T) {
	m, f := newTestModel(t, fixture(), Options{}, 120, 30)
	press(m, "j", "enter", "tab")
	if detailOf(m) == nil {
		t.Fatal("setup: no instance screen")
	}
	cur := detailOf(m).key
	gone := fixture()
	gone.Instances = slices.DeleteFunc(gone.Instances, func(in *state.Instance) bool { return in.Key == cur })
	gone.Version++
	f.snap = gone
	m.Update(flushMsg{})
	if !strings.Contains(plain(m.Frame()), "is gone") {
		t.Fatalf("the gone instance is not announced:\n%s", plain(m.Frame()))
	}
	press(m, "esc")
	if len(m.stack) != 1 {
		t.Fatalf("after one esc the stack has %d screens, want the instances list", len(m.stack))
	}
}

func TestReasonWords(t *testing.T) {
	for _, c := range []struct {
		r    state.Resource
		want string
	}{
		{state.Resource{State: "SKIPPED", IncludeWhen: []string{"schema.spec.on"}, WaitingFor: "includeWhen is false"}, "excluded: includeWhen ${schema.spec.on} is false"},
		{state.Resource{State: "SKIPPED", IncludeWhen: []string{"${a}", "${b}"}}, "excluded: includeWhen ${a} and ${b} is false"},
		{state.Resource{State: "SKIPPED", WaitingFor: "depends on db, which is skipped"}, "excluded: depends on db, which is skipped"},
		{state.Resource{State: "PENDING", WaitingFor: "waiting for worker (waiting for readiness)"}, "waiting for worker (not ready yet)"},
		{state.Resource{State: "PENDING", WaitingFor: "waiting for db (pending)"}, "waiting for db (pending)"},
		{state.Resource{State: "WAITING_FOR_READINESS", WaitingFor: "readyWhen ${x} = false"}, "readyWhen ${x} = false"},
	} {
		if got := reason(&c.r); got != c.want {
			t.Errorf("reason(%s, %q) = %q, want %q", c.r.State, c.r.WaitingFor, got, c.want)
		}
	}
}

func TestReconciledColumnsWords(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "<1 ms", 400 * time.Microsecond: "<1 ms", 3 * time.Millisecond: "3 ms", 1200 * time.Millisecond: "1.2 s", 90 * time.Second: "1m30s"} {
		if got := spaced(d); got != want {
			t.Errorf("spaced(%v) = %q, want %q", d, got, want)
		}
	}
	if got := ageOf(fixedNow, fixedNow.Add(-970*time.Millisecond)) + " ago"; got != "0s ago" {
		t.Errorf("a reconcile 970ms ago reads %q", got)
	}
}

func TestNaturalOrder(t *testing.T) {
	in := []string{"blog-69", "blog-7", "blog", "blog-007x", "a10b2", "a10b10", "a9"}
	slices.SortFunc(in, natural)
	if got := strings.Join(in, " "); got != "a9 a10b2 a10b10 blog blog-7 blog-007x blog-69" {
		t.Fatalf("natural order: %s", got)
	}
}

// TestSecretMaskedWhereverItAppears: a Secret's data is masked inside a
// collection's List, inside another object, in the last-applied
// annotation and in the diff; x reveals only the selected Secret.
func TestSecretMaskedWhereverItAppears(t *testing.T) {
	th := theme.Must(theme.Options{Name: "dark"})
	const token = "s3cr3t-T0KEN-4242"
	secret := func(name string) map[string]any {
		applied := `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"` + name + `"},"stringData":{"token":"` + token + `"}}`
		return map[string]any{"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": name, "annotations": map[string]any{lastApplied: applied}},
			"data":     map[string]any{"token": token}}
	}
	list := &state.Resource{ID: "secrets", APIVersion: "v1", Kind: "Secret", Name: "secrets",
		Desired:  pk(map[string]any{"kind": "List", "items": []any{map[string]any{"metadata": map[string]any{"name": "a"}, "stringData": map[string]any{"token": token}}}}),
		Observed: pk(map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{secret("a"), secret("b")}})}
	// A ConfigMap (not a Secret) that carries a Secret inside, e.g. a
	// custom resource embedding one, or a copied last-applied annotation.
	holder := &state.Resource{ID: "holder", APIVersion: "example.com/v1", Kind: "Holder", Name: "h",
		Observed: pk(map[string]any{"apiVersion": "example.com/v1", "kind": "Holder", "metadata": map[string]any{"name": "h"},
			"spec": map[string]any{"template": secret("inner")}})}
	observedOne := secret("one")
	observedOne["data"] = map[string]any{"token": "b3RoZXI="} // a diff to show
	single := &state.Resource{ID: "one", APIVersion: "v1", Kind: "Secret", Name: "one", Desired: pk(secret("one")), Observed: pk(observedOne)}
	for _, r := range []*state.Resource{list, holder, single} {
		for _, mode := range []yamlMode{yamlDesired, yamlObserved, yamlDiff} {
			s := strings.Join(yamlView(th, r, mode, false), "\n")
			if strings.Contains(s, token) || strings.Contains(s, "b3RoZXI=") {
				t.Errorf("%s %s view leaks the secret:\n%s", r.ID, mode, s)
			}
		}
		// x on a non-Secret reveals nothing.
		if r == holder {
			if s := strings.Join(yamlView(th, r, yamlObserved, true), "\n"); strings.Contains(s, token) {
				t.Errorf("revealing a non-Secret shows the embedded Secret:\n%s", s)
			}
		}
	}
	if s := strings.Join(yamlView(th, single, yamlObserved, true), "\n"); !strings.Contains(s, token) {
		t.Errorf("revealed view hides the data:\n%s", s)
	}
	if list.ObservedObject()["items"].([]any)[0].(map[string]any)["data"].(map[string]any)["token"] != token {
		t.Error("masking modified the snapshot")
	}
}
