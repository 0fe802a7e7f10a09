// Command kroscope runs a kro-compatible instance reconciler in-process and
// shows, live, every instance's resource graph and the state of each
// resource in it.
package main

import (
	"fmt"
	"os"
	"syscall"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"

	// For its init: long-running commands keep resident only the binary
	// pages they run.
	_ "github.com/kroscope/kroscope/internal/residency/early"
	"github.com/kroscope/kroscope/termtext"
)

// rootCmd is the kroscope command; subcommands register themselves in init
// functions of their own files (graph.go, run.go, demo.go, ...).
var rootCmd = &cobra.Command{
	Use:   "kroscope",
	Short: "Reconcile kro ResourceGraphDefinitions in-process and watch every instance's graph live",
	Long: `kroscope runs a kro-compatible instance reconciler in-process and shows,
live, every instance's resource graph and the state of each resource in it.`,
	SilenceUsage:  true,
	SilenceErrors: true,
}

// kubeFlags are kubectl's connection flags (--kubeconfig, --context, -n,
// ...): each command registers those it uses, no more (the demo none).
var kubeFlags = newKubeConnFlags()

func init() {
	kubeFlags.AddFlags(rootCmd.Flags())
	// No library line reaches a user: client-go's klog lines ("Unhandled
	// Error" from discovery, throttling, warnings) repeat what the command
	// reports in its own words. The TUI, run and demo route them to their
	// own logs instead.
	rootCmd.PersistentPreRun = func(*cobra.Command, []string) { routeLibraryLogs(logr.Discard()) }
}

func main() {
	if err := rootCmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "kroscope:", termtext.Escape(err.Error()))
		os.Exit(exitCode(err))
	}
}

// exitCoder lets a command choose its exit status (e.g. validation failures).
type exitCoder interface{ ExitCode() int }

func exitCode(err error) int {
	if ec, ok := err.(exitCoder); ok {
		return ec.ExitCode()
	}
	return 1
}

// shutdownSignals end kroscope as ctrl+c does: the engine shuts down in
// its grace time and releases the Lease. A closed terminal or tmux window
// (SIGHUP) is one of them: killed outright, kroscope kept the Lease until
// it expired, and a kroscope started again meanwhile attached to the dead
// holder for the rest of its run.
var shutdownSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}
