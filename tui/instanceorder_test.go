package tui

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/kroscope/kroscope/engine/state"
)

// TestNatKeyOrdersAsCompareNames: the precomputed sort keys the table sorts
// by order every pair of instance keys exactly as compareNames does.
func TestNatKeyOrdersAsCompareNames(t *testing.T) {
	parts := []string{"a", "b", "-", ".", "0", "00", "7", "07", "69", "100", "x9", "9x", "team", "Z", "~", "app-", "blog-"}
	rnd := rand.New(rand.NewSource(1))
	word := func() string {
		var b strings.Builder
		for range rnd.Intn(4) {
			b.WriteString(parts[rnd.Intn(len(parts))])
		}
		return b.String()
	}
	var keys []state.InstanceKey
	for range 400 {
		keys = append(keys, state.InstanceKey{Resource: []string{"webapps.kro.run", "pipelines.kro.run"}[rnd.Intn(2)], Namespace: word(), Name: word()})
	}
	sign := func(c int) int {
		switch {
		case c < 0:
			return -1
		case c > 0:
			return 1
		}
		return 0
	}
	for _, a := range keys {
		for _, b := range keys {
			want := sign(compareNames(a, b))
			got := sign(strings.Compare(natKey(a), natKey(b)))
			if want != 0 && got != want {
				t.Fatalf("%v vs %v: natKey orders %d, compareNames %d", a, b, got, want)
			}
		}
	}
}

// TestRowsFollowChangedSnapshots: when only some instances change between
// snapshots, the rows keep the order a full sort would give (by name, and
// by state and last reconcile, where a change moves the row).
func TestRowsFollowChangedSnapshots(t *testing.T) {
	s := state.NewStore()
	keys := fillStore(s, 300, 1)
	step := 0 // across the orders, so every change is a change
	for _, by := range []sortKey{sortName, sortState, sortLast} {
		var inc sortedRows
		inc.update(s.Snapshot(), by, false)
		for i := range 50 {
			step++
			st := []string{"ERROR", "SYNCED", "IN_PROGRESS", "PENDING"}[step%4]
			s.UpdateInstance(keys[(step*37)%len(keys)], func(in *state.Instance) {
				in.State, in.Message = st, fmt.Sprint(step)
				in.LastReconcile = fixedNow.Add(time.Duration(step) * time.Second)
			})
			snap := s.Snapshot()
			inc.update(snap, by, false)
			var full sortedRows
			full.update(snap, by, false)
			for j := range full.all {
				if inc.all[j].in != full.all[j].in {
					t.Fatalf("sort %v, change %d: row %d is %v, a full sort has %v", by, i, j, inc.all[j].in.Key, full.all[j].in.Key)
				}
			}
		}
	}
}
