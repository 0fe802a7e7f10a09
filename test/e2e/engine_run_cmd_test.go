package e2e

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/test/engrun"
	"github.com/kroscope/kroscope/test/graphs"
	"github.com/kroscope/kroscope/test/prereq"
)

// `kroscope run` as a user runs it: the real binary against the test API
// server, printing transitions as JSON, then SIGTERM: it shuts down
// gracefully and exits 0.
func TestEngineKroscopeRunCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the kroscope binary")
	}
	r := newEngRig(t)
	bin := prereq.Kroscope(t)
	rgd := r.writeFile("rgd.yaml", graphs.Chain("engcmd", "EngCmd"))
	// An engine in the test installs the CRD first, so the instance exists
	// when the command starts.
	first := r.start(func(o *engine.Options) { o.RGDPaths = []string{rgd} })
	gvr := first.graphServed("engcmd")
	if err := first.stop(); err != nil {
		t.Fatal(err)
	}
	r.createInstance(gvr, "EngCmd", "cmd", nil)

	// The command writes while the test reads: engrun.Buffer keeps that safe.
	var stdout, stderr engrun.Buffer
	cmd := exec.Command(bin, "run", "--kubeconfig", kubeconfig(t, r.cfg), "-n", r.ns, "--rgd", rgd,
		"-o", "json", "--lease-namespace", r.ns, "--cluster-rgds=false")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.Now().Add(2 * time.Minute)
	for r.countActive(gvr) < 1 {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("instance not ACTIVE\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Give the output a moment to catch up with the status write.
	for i := 0; i < 50 && !strings.Contains(stdout.String(), `"to":"`+reconciler.InstanceStateActive+`"`); i++ {
		time.Sleep(100 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("kroscope run exited with %v\nstderr:\n%s", err, stderr.String())
		}
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatal("kroscope run did not exit within a minute of SIGTERM")
	}
	out := stdout.String()
	if !strings.Contains(out, `"event":"transition"`) || !strings.Contains(out, `"to":"ACTIVE"`) || !strings.Contains(out, `"name":"cmd"`) {
		t.Errorf("no ACTIVE transition for cmd in the JSON output:\n%s", out)
	}
	if !strings.Contains(stderr.String(), "shutting down") {
		t.Errorf("logs on stderr do not show the graceful shutdown:\n%s", stderr.String())
	}
}
