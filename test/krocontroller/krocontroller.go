// Package krocontroller runs kro's real controller (the binary hack/kro.sh
// builds from the Go module proxy) as a subprocess against the test API
// server, and installs kro's own CRDs there, so end-to-end tests can compare
// kroscope with kro and hand instances from one to the other.
//
// kro is only ever a binary here: nothing of kro is imported.
package krocontroller

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kroscope/kroscope/test/envtest"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"

	"github.com/kroscope/kroscope/test/krocrds"
	"github.com/kroscope/kroscope/test/prereq"
)

// LeaderElectionID is the Lease name kro's manager campaigns for when
// started with leader election (cmd/controller's LeaderElectionID).
const LeaderElectionID = "controller.kro.run"

// Require returns kro's controller binary (see package prereq), skipping
// the test with a message naming the build command when it is missing
// (failing when CI=true).
func Require(t testing.TB) string {
	t.Helper()
	return prereq.KroController(t)
}

// BinaryVersion is the kro version the tests run.
func BinaryVersion() string { return prereq.KroVersion() }

// CRDs reads kro's ResourceGraphDefinition and GraphRevision CRDs, skipping
// the test with a message when they are absent (see package krocrds).
func CRDs(t testing.TB) []*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	return krocrds.All(t)
}

// Options adjust how the controller runs.
type Options struct {
	// LeaderElectionNamespace turns leader election on, with kro's Lease in
	// this namespace; empty runs without election (one replica).
	LeaderElectionNamespace string
	// Workers is --dynamic-controller-concurrent-reconciles (default 4).
	Workers int
	// Args are appended to the defaults.
	Args []string
}

// Controller is one kro controller process; Stop and Start may alternate.
type Controller struct {
	t          testing.TB
	bin        string
	kubeconfig string
	opts       Options

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	logs *tail
}

// New prepares a controller for the API server cfg points at (a kubeconfig
// with its credentials is written to a temporary folder); Start runs it.
// The process is stopped when the test ends, and its log is written to the
// test log when the test failed (or KRO_DEBUG is set).
func New(t testing.TB, cfg *rest.Config, opts Options) *Controller {
	t.Helper()
	c := &Controller{t: t, bin: Require(t), opts: opts, logs: &tail{max: 400}}
	c.kubeconfig = writeKubeconfig(t, cfg)
	t.Cleanup(func() {
		c.Stop()
		if t.Failed() || os.Getenv("KRO_DEBUG") != "" {
			for _, l := range c.logs.lines() {
				t.Logf("kro: %s", l)
			}
		}
	})
	return c
}

// Start runs the controller (a no-op when it is already running).
func (c *Controller) Start() {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd != nil {
		return
	}
	workers := c.opts.Workers
	if workers <= 0 {
		workers = 4
	}
	args := []string{
		// "0" turns the metrics and probe servers off, so parallel test
		// binaries never compete for kro's fixed default ports.
		"--metrics-bind-address=0",
		"--health-probe-bind-address=0",
		fmt.Sprintf("--dynamic-controller-concurrent-reconciles=%d", workers),
		"--resource-graph-definition-concurrent-reconciles=2",
		"--graceful-shutdown-timeout=5s",
		"--zap-devel=false",
		"--zap-log-level=info",
		// A stack trace on every reconcile error would bury the log.
		"--zap-stacktrace-level=panic",
	}
	if ns := c.opts.LeaderElectionNamespace; ns != "" {
		args = append(args, "--leader-elect=true", "--leader-election-namespace="+ns)
	} else {
		args = append(args, "--leader-elect=false")
	}
	args = append(args, c.opts.Args...)
	cmd := exec.Command(c.bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.kubeconfig)
	cmd.Stdout, cmd.Stderr = c.logs, c.logs
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("starting kro's controller %s: %v", c.bin, err)
	}
	c.logs.add(fmt.Sprintf("--- started pid %d: %s", cmd.Process.Pid, strings.Join(args, " ")))
	done := make(chan struct{})
	go func() {
		err := cmd.Wait()
		c.logs.add(fmt.Sprintf("--- pid %d exited: %v", cmd.Process.Pid, err))
		close(done)
	}()
	c.cmd, c.done = cmd, done
}

// Running reports whether the process is alive.
func (c *Controller) Running() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil {
		return false
	}
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// Stop sends SIGTERM, waits for the process to exit, and kills it after
// 20s. A no-op when it is not running.
func (c *Controller) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(20 * time.Second):
		c.logs.add("--- did not exit 20s after SIGTERM: killing it")
		_ = c.cmd.Process.Kill()
		<-c.done
	}
	c.cmd, c.done = nil, nil
}

// Logs returns the last lines the controller printed.
func (c *Controller) Logs() []string { return c.logs.lines() }

// WaitForLog waits until a log line contains substr.
func (c *Controller) WaitForLog(ctx context.Context, substr string) error {
	for {
		for _, l := range c.logs.lines() {
			if strings.Contains(l, substr) {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kro never logged %q: %w", substr, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func writeKubeconfig(t testing.TB, cfg *rest.Config) string { return envtest.Kubeconfig(t, cfg) }

// tail keeps the last max lines written to it.
type tail struct {
	mu      sync.Mutex
	max     int
	partial []byte
	buf     []string
}

var _ io.Writer = (*tail)(nil)

func (l *tail) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.push(string(l.partial[:i]))
		l.partial = l.partial[i+1:]
	}
	return len(p), nil
}

func (l *tail) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.push(line)
}

func (l *tail) push(line string) {
	l.buf = append(l.buf, line)
	if len(l.buf) > l.max {
		l.buf = l.buf[len(l.buf)-l.max:]
	}
}

func (l *tail) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := append([]string(nil), l.buf...)
	if len(l.partial) > 0 {
		out = append(out, string(l.partial))
	}
	return out
}
