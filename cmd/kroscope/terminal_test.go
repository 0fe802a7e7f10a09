package main

import (
	"strings"
	"testing"
)

// With no terminal (a test's stdout is a pipe) the UI commands say what
// to run instead, before anything starts (#38: bubbletea's raw "could not
// open TTY" after the engine had started).
func TestNoTerminalNamesTheHeadlessCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"demo"}, "use `kroscope demo --headless`"},
		{[]string{"--kubeconfig", "/nonexistent"}, "use `kroscope run`"},
	} {
		_, _, err := runCmd(t, tc.args...)
		if err == nil || !strings.HasPrefix(err.Error(), "no terminal: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("kroscope %v: %v, want no terminal, %s", tc.args, err, tc.want)
		}
	}
}
