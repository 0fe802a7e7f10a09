package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"

	"github.com/kroscope/kroscope/demo"
	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/logsink"
	"github.com/kroscope/kroscope/examples"
	"github.com/kroscope/kroscope/headless"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/termtext"
	"github.com/kroscope/kroscope/tui"
)

// demoFlags are the demo's own flags.
type demoFlags struct {
	demo      demo.Options
	headless  bool
	h         headless.Options
	workers   int
	verbosity int
	ui        tui.Options
	limits    graph.Limits
}

func init() {
	var f demoFlags
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run kroscope on an in-memory demo cluster with the bundled examples (no cluster needed)",
		Long: `demo starts an in-memory Kubernetes API with simulated controllers (Deployments
roll out, Jobs complete, Services get addresses), loads the bundled example
graphs (` + strings.Join(examples.Default(examples.Names()), ", ") + `; ` + strings.Join(examples.OptIn, ", ") + ` only when named in
--examples) and creates a few instances of each. The engine and reconciler
are the real ones: requeue, delete and inspect work as on a real cluster.

--fail-rate makes a fraction of child writes fail, so errors and retries show.
--headless runs without the UI, like 'kroscope run': one line per instance
state change, and --exit-when/--timeout for scripts (the "broken" example
fails on purpose, so leave it out to expect success).

The demo sets a soft memory limit of ` + fmt.Sprint(demo.MemoryLimit>>20) + ` MiB (the in-memory cluster
shares the process) unless GOMEMLIMIT is set.`,
		Example: `  kroscope demo
  kroscope demo --examples webapp --instances 20 --fail-rate 0.1
  kroscope demo --headless --examples webapp,fanout --exit-when active --timeout 60s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), shutdownSignals...)
			defer stop()
			log := demoLogger(f, termtext.Writer(cmd.ErrOrStderr()))
			// client-go logs through klog: a process-wide setting, made
			// here rather than in runDemo, which tests call repeatedly.
			setClientGoLogger(log.WithName("client-go"))
			if os.Getenv("GOMEMLIMIT") == "" {
				debug.SetMemoryLimit(demo.MemoryLimit) // process-wide too
			}
			return runDemo(ctx, f, log, termtext.Writer(cmd.OutOrStdout()))
		},
	}
	fs := cmd.Flags()
	fs.StringSliceVar(&f.demo.Examples, "examples", nil, examplesUsage())
	fs.IntVar(&f.demo.Instances, "instances", 0, "instances of each example (0: the ones each example lists)")
	fs.Float64Var(&f.demo.FailRate, "fail-rate", 0, "fraction (0..1) of child writes that fail with an injected 500 or conflict")
	fs.Int64Var(&f.demo.Seed, "seed", 0, "seed for --fail-rate, to repeat a run (0: random)")
	fs.IntVar(&f.workers, "workers", 0, fmt.Sprintf("parallel reconciles (0: %d per CPU: the in-memory cluster answers at once)", demo.WorkersPerCPU))
	fs.BoolVar(&f.headless, "headless", false, "no UI: print one line per instance state change, like 'kroscope run'")
	fs.StringVarP(&f.h.Output, "output", "o", "text", "with --headless: transition lines as text or json")
	fs.StringVar(&f.h.ExitWhen, "exit-when", "", "with --headless: exit once every instance is ACTIVE (active) or nothing is left to do (idle)")
	fs.DurationVar(&f.h.Timeout, "timeout", 0, "with --headless: give up (exit code 2) when --exit-when has not happened by then")
	fs.IntVar(&f.verbosity, "log-level", 0, "with --headless: log verbosity on stderr (0 info, 1 debug)")
	addUIFlags(fs, &f.ui)
	addCELLimitFlags(fs, &f.limits)
	rootCmd.AddCommand(cmd)
}

// examplesUsage is --examples' help: the examples loaded by default, and
// those loaded only when named.
func examplesUsage() string {
	return "examples to load, comma-separated (default " + strings.Join(examples.Default(examples.Names()), ",") +
		"; " + strings.Join(examples.OptIn, ",") + " only when named)"
}

// demoLogger logs to stderr when headless; under the UI, logs go to its
// log pane only.
func demoLogger(f demoFlags, stderr io.Writer) logr.Logger {
	if f.headless {
		return logsink.New(logsink.Options{Writer: stderr, Verbosity: f.verbosity})
	}
	return logsink.New(logsink.Options{})
}

// runDemo builds the demo cluster, then runs the engine on it under the UI
// or headless.
func runDemo(ctx context.Context, f demoFlags, log logr.Logger, stdout io.Writer) error {
	if !f.headless && (f.h.ExitWhen != "" || f.h.Timeout != 0) {
		return errors.New("--exit-when and --timeout need --headless")
	}
	if !f.headless {
		if err := needTerminal("kroscope demo --headless"); err != nil {
			return err
		}
	}
	f.demo.Log = log.WithName("demo")
	d, err := demo.New(f.demo)
	if err != nil {
		return err
	}
	o := d.EngineOptions(f.workers, log)
	o.CELLimits = f.limits
	e, err := engine.New(o)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	demoDone := make(chan error, 1)
	go func() { demoDone <- d.Run(ctx) }()
	var runErr error
	if f.headless {
		runErr = headless.Run(ctx, e, stdout, f.h)
	} else {
		runErr = runEngineWithUI(ctx, e, f.ui)
	}
	cancel()
	if derr := <-demoDone; derr != nil && runErr == nil {
		runErr = fmt.Errorf("demo: %w", derr)
	}
	return runErr
}
