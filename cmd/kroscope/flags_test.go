package main

import (
	"strings"
	"testing"
)

// A command's help lists the connection flags it uses, no more (#38:
// validate, graph and render listed every kubectl flag, though they take
// only those naming the cluster whose API types the templates, and the
// demo listed them all though it has its own in-memory cluster).
func TestHelpListsTheConnectionFlagsUsed(t *testing.T) {
	all := []string{"--kubeconfig", "--context", "--server", "--cluster", "--token", "--as", "--namespace", "--user"}
	for _, tc := range []struct {
		args []string
		has  []string
	}{
		{[]string{"validate"}, []string{"--kubeconfig", "--context", "--server", "--cluster"}},
		{[]string{"graph"}, []string{"--kubeconfig", "--context", "--server", "--cluster"}},
		{[]string{"render"}, []string{"--kubeconfig", "--context", "--server", "--cluster", "--namespace"}},
		{[]string{"demo"}, nil},
		{[]string{"version"}, nil},
		{[]string{"config", "check"}, nil},
		{[]string{"run"}, all},
		{[]string{"plan"}, all},
		{[]string{"rbac"}, all},
		{nil, all},
	} {
		out, _, err := runCmd(t, append(tc.args, "--help")...)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range all {
			listed := strings.Contains(out, " "+f+" ")
			if want := strings.Contains(" "+strings.Join(tc.has, " ")+" ", " "+f+" "); listed != want {
				t.Errorf("kroscope %v --help: lists %s: %v, want %v", tc.args, f, listed, want)
			}
		}
	}
}
