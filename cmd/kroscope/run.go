package main

import (
	"context"
	"fmt"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/logsink"
	"github.com/kroscope/kroscope/headless"
	"github.com/kroscope/kroscope/termtext"
)

func init() {
	var (
		o         engine.Options
		h         headless.Options
		logFile   string
		logFormat string
		verbosity int
	)
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the reconciler without the TUI, printing one line per instance state change",
		Long: `run starts kroscope's engine without the terminal UI. It prints one line per
instance state transition (-o text or json) on stdout and logs on stderr (or
--log-file). With --exit-when it ends once every instance is ACTIVE, or once
nothing is left to do, and exits non-zero when an instance ends in ERROR or
FAILED or --timeout passes: handy for scripts and CI.`,
		Example: `  kroscope run --rgd examples/webapp/rgd.yaml
  kroscope run --rgd graphs/ --exit-when active --timeout 2m -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkRGDPaths(o.RGDPaths); err != nil {
				return err
			}
			logOut := cmd.ErrOrStderr()
			if logFile != "" {
				f, err := logsink.OpenFile(logFile)
				if err != nil {
					return fmt.Errorf("opening --log-file: %w", err)
				}
				defer f.Close()
				logOut = f
			}
			log, err := newRunLogger(logOut, logFormat, verbosity)
			if err != nil {
				return err
			}
			o.Log = log
			routeLibraryLogs(o.Log)
			if err := connectEngine(cmd, &o); err != nil {
				return err
			}
			o.Log.Info("connecting", "cluster", o.Cluster.Context, "server", o.Cluster.Server, "namespace", o.Namespace, "from", o.Cluster.Source)
			e, err := engine.New(o)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), shutdownSignals...)
			defer stop()
			go releaseOnceReady(ctx, e)
			return headless.Run(ctx, e, termtext.Writer(cmd.OutOrStdout()), h)
		},
	}
	fs := cmd.Flags()
	kubeFlags.AddFlags(fs)
	addEngineFlags(fs, &o)
	fs.BoolVar(&o.CheckRights, "check-rights", true, "before serving a graph, ask the API server whether this identity holds every rule the graph needs (`kroscope rbac` prints them); a graph it lacks one for is shown as not served, naming the rule")
	fs.StringVarP(&h.Output, "output", "o", "text", "transition lines as text or json")
	fs.StringVar(&h.ExitWhen, "exit-when", "", "exit once every instance is ACTIVE (active) or nothing is left to do (idle)")
	fs.DurationVar(&h.Timeout, "timeout", 0, "give up (exit code 2) when --exit-when has not happened by then")
	fs.StringVar(&logFile, "log-file", "", "write logs to this file instead of stderr")
	fs.IntVar(&verbosity, "log-level", 0, "log verbosity (0 info, 1 debug)")
	fs.StringVar(&logFormat, "log-format", LogFormatText, "logs as text lines or json (one object per line, for a Pod's log collector)")
	rootCmd.AddCommand(cmd)
}
