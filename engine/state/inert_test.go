package state

import (
	"strings"
	"testing"
	"time"

	"github.com/kroscope/kroscope/termtext"
	"github.com/kroscope/kroscope/termtext/termtexttest"
)

// plantedSnapshot has a value in every field that can hold one, and
// every sequence of termtexttest in every string.
func plantedSnapshot() *Snapshot {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	mem := &ErrorMemory{Err: "e", Since: at}
	res := Resource{ID: "r", APIVersion: "v1", Kind: "ConfigMap", Name: "n", Namespace: "ns", Dependencies: []string{"d"},
		State: "ERROR", Err: "e", WaitingFor: "w", ReadyWhen: []string{"x"}, IncludeWhen: []string{"y"},
		ReadyChecks: []ReadyCheck{{Expr: "x", Result: "r", Operands: []Operand{{Path: "p", Value: "v"}}}},
		DesiredHash: "h", LastError: &ErrorMemory{Err: "e", Since: at}}
	in := &Instance{Key: InstanceKey{Resource: "webapps.kro.run", Namespace: "ns", Name: "web"}, APIVersion: "v1", Kind: "WebApp",
		Graph: "g", UID: "u", State: "ERROR", Message: "m", Resources: []Resource{res}, Layers: [][]string{{"r"}},
		History: []Transition{{At: at, From: "a", To: "b", Message: "m"}}, LastError: mem,
		Log: []LogLine{{At: at, Level: "error", Message: "m", KV: "k=v"}}}
	s := &Snapshot{
		Cluster:   Cluster{Context: "c", Server: "s", Namespace: "ns", Source: "src"},
		Mode:      Mode{Identity: "i", Holder: "h", Kro: "k", RequeueNote: "n"},
		Startup:   Startup{Phase: "p"},
		Fatal:     &Fatal{Title: "t", Cause: "c", Hint: "h"},
		Watches:   []Watch{{Name: "w", Err: "e", Resource: "r", Namespace: "n"}},
		Graphs:    []Graph{{Name: "g", Source: "f", APIVersion: "v", Kind: "K", Resource: "r", Err: "e", Note: "n", Definition: &GraphDefinition{Scope: "s", UID: "u", YAML: "y"}, Kro: &KroGraph{State: "s", Blocked: "b", Conditions: []Condition{{Type: "t", Status: "s", Reason: "r", Message: "m"}}}}},
		Instances: []*Instance{in},
		Logs:      []LogLine{{At: at, Level: "info", Message: "m", KV: "k=v"}},
	}
	termtexttest.Plant(s, termtexttest.Payload())
	return s
}

// TestViewsMakeEveryStringInert: whatever field a sequence is planted in,
// the snapshot a view gets shows it escaped, and the store's snapshot is
// not changed.
func TestViewsMakeEveryStringInert(t *testing.T) {
	s := plantedSnapshot()
	before := termtexttest.Strings(s)
	planted := 0
	for _, str := range before {
		if strings.Contains(str, termtexttest.Payload()) {
			planted++
		}
	}
	if planted < 40 {
		t.Fatalf("planted in %d strings only: the fixture lost its fields", planted)
	}
	var v Views
	out := v.Snapshot(s)
	shown := 0
	for _, str := range termtexttest.Strings(out) {
		if bad := termtexttest.Unsafe(str); len(bad) > 0 || strings.ContainsFunc(str, termtext.Unsafe) {
			t.Errorf("%q still carries %v", str, bad)
		}
		if len(termtexttest.Escaped(str)) == 0 {
			shown++
		}
	}
	if shown != planted {
		t.Errorf("%d strings show every sequence escaped, %d were planted", shown, planted)
	}
	if got := termtexttest.Strings(s); strings.Join(got, "|") != strings.Join(before, "|") {
		t.Error("the store's snapshot was changed")
	}
	if v.Snapshot(s) != out {
		t.Error("the same snapshot was converted twice")
	}
	// A new snapshot with the same instance value converts nothing again.
	next := *s
	next.Version++
	if o := v.Snapshot(&next); o.Instances[0] != out.Instances[0] {
		t.Error("an unchanged instance was converted again")
	}
}

func TestViewsShareCleanData(t *testing.T) {
	in := &Instance{Key: InstanceKey{Resource: "r", Name: "n"}, Message: "fine", Resources: []Resource{{ID: "a"}}}
	s := &Snapshot{Instances: []*Instance{in}, Graphs: []Graph{{Name: "g"}}}
	var v Views
	out := v.Snapshot(s)
	if out.Instances[0] != in || &out.Graphs[0] != &s.Graphs[0] {
		t.Error("clean data was copied")
	}
}

// BenchmarkViews10000 is a frame's conversion at 10,000 instances when
// one of them changed since the last frame.
func BenchmarkViews10000(b *testing.B) {
	ins := make([]*Instance, 10000)
	for i := range ins {
		ins[i] = &Instance{Key: InstanceKey{Resource: "webapps.kro.run", Namespace: "ns", Name: "web" + string(rune('a'+i%26))},
			Message: "waiting for deployment", Resources: []Resource{{ID: "a", Err: "x"}, {ID: "b", WaitingFor: "a"}}}
	}
	var v Views
	v.Snapshot(&Snapshot{Instances: ins})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		next := append([]*Instance(nil), ins...)
		c := *next[i%len(next)]
		c.Message = "changed\x1b[2J"
		next[i%len(next)] = &c
		v.Snapshot(&Snapshot{Version: uint64(i), Instances: next})
	}
}
