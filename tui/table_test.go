package tui

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kroscope/kroscope/engine/state"
)

// manyInstances is the fixture with n more instances, so the list does
// not fit the screen.
func manyInstances(n int) *state.Snapshot {
	s := fixture()
	for i := range n {
		s.Instances = append(s.Instances, &state.Instance{Key: state.InstanceKey{Resource: webapps, Namespace: "team-d", Name: fmt.Sprintf("app-%02d", i)},
			Kind: "WebApp", Graph: "webapp", Created: at(-60), State: "ACTIVE", Version: uint64(100 + i)})
	}
	return s
}

// The table says which rows it shows when not all fit, and follows the
// cursor: "1-19 of 36" moves as the cursor leaves the screen.
func TestTableSaysWhichRowsItShows(t *testing.T) {
	m, _ := newTestModel(t, fixture(), Options{}, 80, 24)
	if f := plain(m.Frame()); strings.Contains(f, " of ") {
		t.Fatalf("every row fits, yet the counts say a range:\n%s", f)
	}
	m, _ = newTestModel(t, manyInstances(30), Options{}, 80, 24)
	rows := listOf(m).table.h - 1
	want := fmt.Sprintf("(1-%d of 36)", rows)
	if f := plain(m.Frame()); !strings.Contains(f, want) {
		t.Fatalf("counts lack %q:\n%s", want, f)
	}
	press(m, "G")
	want = fmt.Sprintf("(%d-36 of 36)", 36-rows+1)
	if f := plain(m.Frame()); !strings.Contains(f, want) {
		t.Fatalf("after G the counts lack %q:\n%s", want, f)
	}
}

// The cursor stays on the instance the user chose while the rows change
// order under it, and when the user sorts them (#38: sorting put it on
// the first row).
func TestTableKeepsTheChosenRow(t *testing.T) {
	m, f := newTestModel(t, fixture(), Options{}, 120, 30)
	press(m, "j", "j")
	chosen := listOf(m).selected().Key
	snap := fixture()
	snap.Instances = append([]*state.Instance{{Key: state.InstanceKey{Resource: webapps, Namespace: "team-a", Name: "aaa"}, Kind: "WebApp", State: "ACTIVE", Version: 1}}, snap.Instances...)
	snap.Version++
	f.snap = snap
	m.Update(flushMsg{})
	if got := listOf(m).selected().Key; got != chosen {
		t.Fatalf("cursor moved from %v to %v when a row came above it", chosen, got)
	}
	press(m, "K")
	if got := listOf(m).selected().Key; got != chosen || listOf(m).table.desc {
		t.Fatalf("sorting moved the cursor from %v to %v (descending %v)", chosen, got, listOf(m).table.desc)
	}
	press(m, "K")
	if !listOf(m).table.desc {
		t.Fatal("the same sort key again does not reverse the order")
	}
}

// widths: fixed columns keep their width, flexible ones share the rest,
// and when the rest is too small the columns with a drop rank give way in
// rank order, then the one with a floor shrinks to it.
func TestTableWidths(t *testing.T) {
	fixed := func(n int) func() int { return func() int { return n } }
	cell := func(string, int) string { return "" }
	c := &common{host: &host{}}
	cols := []column[string]{
		{header: "A", width: fixed(10), floor: 4, cell: cell},
		{header: "B", width: fixed(8), drop: 2, cell: cell},
		{header: "C", width: fixed(6), drop: 1, cell: cell},
		{header: "D", flex: func(rest int) int { return max(rest, 0) }, least: fixed(10), cell: cell},
	}
	tb := newTable[string, string, struct{}](c, "", cols, nil, func(s string) string { return s }, func() {})
	for _, tc := range []struct {
		w    int
		want []int
	}{
		{60, []int{10, 8, 6, 33}}, // 3 gaps
		{30, []int{10, 8, 0, 10}}, // C gave way first
		{20, []int{9, 0, 0, 10}},  // then B, then A shrank
		{10, []int{4, 0, 0, 5}},   // A down to its floor; D takes what is left
	} {
		if got := tb.widths(tc.w); !slices.Equal(got, tc.want) {
			t.Errorf("widths(%d) = %v, want %v", tc.w, got, tc.want)
		}
	}
}

// Adding a column to the instance list is one entry: the header names
// it, every row fills it, and the message column gives it its room.
func TestInstanceListColumnIsOneEntry(t *testing.T) {
	m, _ := newTestModel(t, fixture(), Options{}, 160, 30)
	before := plain(m.Frame())
	l := listOf(m)
	cols := l.table.cols
	graph := column[*state.Instance]{header: "GRAPH", width: func() int { return 9 }, cell: func(in *state.Instance, _ int) string { return in.Graph }}
	l.table.cols = append(slices.Clone(cols[:len(cols)-1]), graph, cols[len(cols)-1])
	l.lines = nil
	m.Update(flushMsg{})
	after := plain(m.Frame())
	if !strings.Contains(after, "GRAPH") || strings.Contains(before, "GRAPH") {
		t.Fatalf("the new column's header does not show:\n%s", after)
	}
	for _, line := range strings.Split(after, "\n") {
		if strings.Contains(line, "team-b/orders") && !strings.Contains(line, "ms   database") {
			t.Errorf("the row lacks its GRAPH cell: %q", line)
		}
	}
}
