package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kroscope/kroscope/test/prereq"
)

func TestConnectionSource(t *testing.T) {
	empty, set := "", "/nonexistent"
	home := []string{"/home/me/.kube/config"}
	for _, tc := range []struct {
		name    string
		f       kubeconfigFacts
		want    string
		wantErr string
	}{
		{name: "a kubeconfig and its context", f: kubeconfigFacts{Files: home, Missing: []bool{false}, Context: "kind-kind"},
			want: "kubeconfig /home/me/.kube/config, context kind-kind"},
		{name: "several files, one missing", f: kubeconfigFacts{Files: []string{"/a", "/b"}, Missing: []bool{true, false}, Context: "c", Env: &set},
			want: "kubeconfig /b, context c"},
		{name: "--server alone", f: kubeconfigFacts{Files: home, Missing: []bool{true}},
			want: "the connection flags (no kubeconfig file)"},
		{name: "in a Pod", f: kubeconfigFacts{Files: home, Missing: []bool{true}, Default: false, Context: InClusterContext},
			want: "the Pod's ServiceAccount (in-cluster)"},
		{name: "$KUBECONFIG names a missing file", f: kubeconfigFacts{Files: []string{set}, Missing: []bool{true}, Env: &set, Default: true},
			wantErr: "no kubeconfig found: $KUBECONFIG names /nonexistent, which does not exist; point --kubeconfig or $KUBECONFIG at a kubeconfig, or try `kroscope demo`, which needs no cluster"},
		{name: "$KUBECONFIG empty, no ~/.kube/config", f: kubeconfigFacts{Files: home, Missing: []bool{true}, Env: &empty, Default: true},
			wantErr: "no kubeconfig found: $KUBECONFIG is empty and /home/me/.kube/config does not exist;"},
		{name: "$KUBECONFIG unset, no ~/.kube/config", f: kubeconfigFacts{Files: home, Missing: []bool{true}, Default: true},
			wantErr: "no kubeconfig found: /home/me/.kube/config does not exist and $KUBECONFIG is not set;"},
		{name: "a file without clusters", f: kubeconfigFacts{Files: home, Missing: []bool{false}, Default: true},
			wantErr: "no kubeconfig found: /home/me/.kube/config holds no cluster and no current context;"},
	} {
		got, err := connectionSource(tc.f)
		if tc.wantErr != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
				t.Errorf("%s: got %q, %v; want the error %q", tc.name, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: got %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

// A first run's errors name the cause (issue 27 item 6): no kubeconfig
// says so and suggests the demo instead of dialing localhost:8080; a
// kubeconfig whose server does not answer is named with its context; a
// missing --rgd path is named before anything connects. Every command
// that needs a cluster says it in the same words, and no klog line
// reaches the user (#38).
func TestFirstRunErrorsNameTheCause(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := prereq.Kroscope(t)
	dir := t.TempDir()
	dead := filepath.Join(dir, "dead.kubeconfig")
	if err := os.WriteFile(dead, []byte(`apiVersion: v1
kind: Config
clusters: [{name: dead, cluster: {server: "https://127.0.0.1:9"}}]
users: [{name: me, user: {token: x}}]
contexts: [{name: dead-ctx, context: {cluster: dead, user: me}}]
current-context: dead-ctx
`), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.kubeconfig")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	rgd := filepath.Join(prereq.RepoRoot(), "examples", "webapp", "rgd.yaml")
	for _, tc := range []struct {
		env  string
		args []string
		want []string
	}{
		{"KUBECONFIG=/nonexistent", []string{"run"}, []string{"kroscope: no kubeconfig found: $KUBECONFIG names /nonexistent, which does not exist", "`kroscope demo`"}},
		{"KUBECONFIG=" + dead, []string{"run", "--kro-poll-interval=-1s"}, []string{"cannot reach the API server", "kubeconfig " + dead + ", context dead-ctx", "`kroscope demo`"}},
		{"KUBECONFIG=" + dead, []string{"run", "--rgd", "/nonexistent"}, []string{"kroscope: --rgd /nonexistent: no such file or directory"}},
		{"KUBECONFIG=/nonexistent", []string{"--rgd", "/nonexistent"}, []string{"kroscope: --rgd /nonexistent: no such file or directory"}},
		// plan decides as run does (#38: it dialed localhost:8080 and
		// printed klog's "Unhandled Error" lines first).
		{"KUBECONFIG=/nonexistent", []string{"plan", rgd}, []string{"kroscope: no kubeconfig found: $KUBECONFIG names /nonexistent, which does not exist", "`kroscope demo`"}},
		{"KUBECONFIG=" + empty, []string{"plan", rgd}, []string{"kroscope: no kubeconfig found: " + empty + " holds no cluster and no current context"}},
		{"KUBECONFIG=" + dead, []string{"plan", rgd}, []string{"kroscope: cannot reach the API server", "kubeconfig " + dead + ", context dead-ctx", "`kroscope demo`"}},
		{"KUBECONFIG=" + dead, []string{"plan", "-i", rgd}, []string{"kroscope: cannot reach the API server"}},
		{"KUBECONFIG=" + dead, []string{"validate", "--context", "dead-ctx", rgd}, []string{"kroscope: cannot reach the API server"}},
	} {
		cmd := exec.Command(bin, tc.args...)
		cmd.Env = append(os.Environ(), tc.env)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Errorf("%s kroscope %v: %v, want exit status 1\n%s", tc.env, tc.args, err, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("%s kroscope %v: output lacks %q:\n%s", tc.env, tc.args, w, out)
			}
		}
		for _, w := range []string{"localhost:8080", "Unhandled Error", "UnhandledError", ".go:"} {
			if strings.Contains(string(out), w) {
				t.Errorf("%s kroscope %v: output has %q (client-go's default server, or a klog line):\n%s", tc.env, tc.args, w, out)
			}
		}
	}
}

// An object that names no namespace goes where kubectl would put it: -n,
// else the context's namespace, else default (#38: `plan -i` without -n).
func TestConnectFlagsNamespace(t *testing.T) {
	dir := t.TempDir()
	kc := func(name, ns string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:9"}}]
users: [{name: me, user: {token: x}}]
contexts: [{name: ctx, context: {cluster: c, user: me, namespace: "`+ns+`"}}]
current-context: ctx
`), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Cleanup(func() { kubeFlags.rules.ExplicitPath, kubeFlags.overrides.Context.Namespace = "", "" })
	for _, tc := range []struct{ file, flag, want string }{
		{kc("team.kubeconfig", "team-a"), "", "team-a"},
		{kc("team.kubeconfig", "team-a"), "other", "other"},
		{kc("none.kubeconfig", ""), "", "default"},
	} {
		kubeFlags.rules.ExplicitPath, kubeFlags.overrides.Context.Namespace = tc.file, tc.flag
		c, err := connectFlags()
		if err != nil {
			t.Fatal(err)
		}
		if c.namespace != tc.want {
			t.Errorf("%s, -n %q: namespace %q, want %q", filepath.Base(tc.file), tc.flag, c.namespace, tc.want)
		}
	}
}
