package early

import "testing"

func TestReleases(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{nil, true}, // the TUI
		{[]string{"--context", "kind-kind", "-n", "team-a"}, true},
		{[]string{"run", "--rgd", "graphs/"}, true},
		{[]string{"demo", "--headless"}, true},
		{[]string{"version"}, false},
		{[]string{"__complete", "run", "--"}, false}, // every tab in a shell
		{[]string{"completion", "bash"}, false},
		{[]string{"validate", "examples/"}, false},
		{[]string{"run", "--help"}, false},
	} {
		if got := releases(tc.args); got != tc.want {
			t.Errorf("releases(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}
