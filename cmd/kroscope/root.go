package main

import (
	"context"
	"errors"
	"fmt"
	"os/signal"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/logsink"
	"github.com/kroscope/kroscope/tui"
)

// The root command runs the engine against the kubeconfig's cluster and the
// terminal UI over it.
func init() {
	var (
		o         engine.Options
		ui        tui.Options
		takeLease bool
		yes       bool
	)
	rootCmd.Example = `  kroscope --rgd examples/webapp/          # serve a graph from files on the current context
  kroscope --context kind-kind -n team-a   # the cluster's graphs, one namespace
  kroscope --observe                       # watch where kro itself reconciles; write nothing
  kroscope --attach=false                  # beside an in-cluster kroscope: observe only, no requeue or delete
  kroscope demo                            # no cluster needed`
	rootCmd.Args = cobra.NoArgs
	rootCmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := checkRGDPaths(o.RGDPaths); err != nil {
			return err
		}
		if err := needTerminal("kroscope run"); err != nil {
			return err
		}
		ctx, stop := signal.NotifyContext(context.Background(), shutdownSignals...)
		defer stop()
		// Logs go to the UI's log pane only: nothing may write to the
		// terminal under the UI.
		o.Log = logsink.New(logsink.Options{})
		routeLibraryLogs(o.Log)
		if err := connectEngine(cmd, &o); err != nil {
			var none *noKubeconfigError
			if errors.As(err, &none) {
				return tui.Run(ctx, tui.FatalBackend("No cluster to connect to", "no kubeconfig found: "+none.looked,
					"Point --kubeconfig or $KUBECONFIG at a kubeconfig, or try `kroscope demo`, which needs no cluster."), ui)
			}
			return tui.Run(ctx, tui.FatalBackend("Cannot connect to a cluster", err.Error(),
				"Check --kubeconfig/--context (or $KUBECONFIG), or try `kroscope demo`, which needs no cluster."), ui)
		}
		// A local TUI does not take the Lease from a kroscope that holds
		// it (the in-cluster replicas): it attaches, unless --take-lease.
		o.CampaignIfFree = !takeLease
		// About to become the cluster's writer with the user's own
		// credentials, the TUI asks first (issue #35), unless --yes.
		o.AskBeforeWriting = !yes
		e, err := engine.New(o)
		if err != nil {
			return tui.Run(ctx, tui.FatalBackend("Cannot start the engine", err.Error(),
				"Check the flags; `kroscope --help` lists them."), ui)
		}
		go releaseOnceReady(ctx, e)
		return runEngineWithUI(ctx, e, ui)
	}
	addEngineFlags(rootCmd.Flags(), &o)
	addAttachFlags(rootCmd.Flags(), &o, &takeLease)
	rootCmd.Flags().BoolVar(&yes, "yes", false, "when no kroscope or kro reconciles the cluster, start reconciling with your credentials without asking first (by default the header asks, and W says yes)")
	addUIFlags(rootCmd.Flags(), &ui)
}

// addAttachFlags registers how the TUI shares the cluster with a kroscope
// that holds the Lease (`kroscope run` in the cluster).
func addAttachFlags(fs *pflag.FlagSet, o *engine.Options, takeLease *bool) {
	fs.BoolVar(&o.Attach, "attach", true, "while another kroscope holds the Lease (or kro reconciles), requeue by writing the "+engine.RequeueAnnotation+
		" annotation on the instance and delete through the API; false: observe only (requeue and delete refused)")
	fs.BoolVar(takeLease, "take-lease", false, "campaign for the Lease even when another kroscope holds it (it takes over once the holder stops renewing); "+
		"by default the TUI campaigns only when the Lease is free or expired, and otherwise attaches to its holder")
}

// addUIFlags registers the terminal UI's flags on fs.
func addUIFlags(fs *pflag.FlagSet, ui *tui.Options) {
	fs.StringVar(&ui.Theme, "theme", "", "colour theme: auto, dark, light or high-contrast (default: config file, then auto)")
	fs.BoolVar(&ui.ASCII, "ascii", false, "use ASCII instead of Unicode glyphs")
	fs.BoolVar(&ui.NoColor, "no-color", false, "no colours (also when NO_COLOR is set)")
	fs.StringVar(&ui.ConfigPath, "config", "", "config file for keys and theme (default $XDG_CONFIG_HOME/kroscope/config.yaml)")
	fs.BoolVar(&ui.NoMouse, "no-mouse", false, "do not capture the mouse")
}

// runEngineWithUI runs e in the background and the UI in the foreground;
// quitting the UI stops the engine, which finishes in-flight reconciles.
func runEngineWithUI(ctx context.Context, e *engine.Engine, ui tui.Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	uiErr := tui.Run(ctx, e, ui)
	cancel()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, context.Canceled) {
			return errors.Join(uiErr, fmt.Errorf("engine: %w", err))
		}
	case <-time.After(30 * time.Second):
		return errors.Join(uiErr, errors.New("engine did not stop within 30s"))
	}
	return uiErr
}
