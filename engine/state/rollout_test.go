package state

import "testing"

func TestRolled(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		in                       Instance
		serving                  int64
		counted, updated, failed bool
	}{
		{"reconciled with the definition served now", Instance{Serving: 2, State: "ACTIVE"}, 2, true, true, false},
		{"applied, waiting for readiness", Instance{Serving: 2, State: "IN_PROGRESS"}, 2, true, true, false},
		{"reconciled with the previous definition", Instance{Serving: 1, State: "ACTIVE"}, 2, true, false, false},
		{"failed with the definition served now", Instance{Serving: 2, State: "ERROR"}, 2, true, false, true},
		{"failed with the previous definition only", Instance{Serving: 1, State: "ERROR"}, 2, true, false, false},
		{"not reconciled yet", Instance{Serving: 2}, 2, true, false, false},
		{"the graph is not served", Instance{State: "ACTIVE"}, 0, true, false, false},
		{"being deleted", Instance{Serving: 1, State: "ACTIVE", Deleting: true}, 2, false, false, false},
		{"suspended", Instance{Serving: 1, State: "SUSPENDED"}, 2, false, false, false},
	} {
		c, u, f := Rolled(&tc.in, tc.serving)
		if c != tc.counted || u != tc.updated || f != tc.failed {
			t.Errorf("%s: Rolled = %v, %v, %v, want %v, %v, %v", tc.name, c, u, f, tc.counted, tc.updated, tc.failed)
		}
	}
}

func TestRolloutRunning(t *testing.T) {
	for _, tc := range []struct {
		r    Rollout
		want bool
		line string
	}{
		{Rollout{Serving: 1, Updated: 3, Total: 120}, false, "updated 3/120"}, // the first definition: no change
		{Rollout{Serving: 2, Updated: 37, Failed: 3, Total: 120}, true, "updated 37/120, 3 failed"},
		{Rollout{Serving: 2, Updated: 120, Total: 120}, false, "updated 120/120"},
		{Rollout{Serving: 3, Updated: 0, Total: 0}, false, "updated 0/0"},
	} {
		if got := tc.r.Running(); got != tc.want {
			t.Errorf("%+v: Running = %v, want %v", tc.r, got, tc.want)
		}
		if got := tc.r.Line(); got != tc.line {
			t.Errorf("%+v: Line = %q, want %q", tc.r, got, tc.line)
		}
	}
}
