package reconciler

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// TestRecreationsStreak: creates count up; a stale sighting right after a
// create keeps the streak; the same object seen again after survival ends
// it; a new create after a sighting keeps counting.
func TestRecreationsStreak(t *testing.T) {
	var c recreations
	t0 := time.Unix(1000, 0)
	steps := []struct {
		created bool
		obj     string
		at      time.Duration
		want    int
	}{
		{true, "a", 0, 1},
		{false, "a", 10 * time.Millisecond, 1}, // maybe stale
		{false, "a", 20 * time.Millisecond, 1}, // too soon to have survived
		{true, "b", 30 * time.Millisecond, 2},
		{true, "c", 40 * time.Millisecond, 3},
		{false, "c", 50 * time.Millisecond, 3},
		{false, "c", 50*time.Millisecond + survival, 0}, // survived
		{false, "c", 3 * survival, 0},
		{true, "d", 4 * survival, 1},
	}
	for i, s := range steps {
		if got := c.note("uid", "cm", s.created, types.UID(s.obj), t0.Add(s.at)); got != s.want {
			t.Fatalf("step %d: %d passes, want %d", i, got, s.want)
		}
	}
	c.forget("uid")
	if len(c.n) != 0 {
		t.Fatalf("forget left %v", c.n)
	}
}
