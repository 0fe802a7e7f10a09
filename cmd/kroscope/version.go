package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3"; a
// `go install ...@version` build reports its module version instead.
var version = ""

// buildInfo is what `kroscope version` prints.
type buildInfo struct {
	Version   string `json:"version"`
	GoVersion string `json:"goVersion"`
	Commit    string `json:"commit,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
}

func currentBuild() buildInfo {
	b := buildInfo{Version: version}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		if b.Version == "" {
			b.Version = "(devel)"
		}
		return b
	}
	b.GoVersion = info.GoVersion
	if b.Version == "" {
		b.Version = info.Main.Version
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	if b.Version == "" {
		b.Version = "(devel)"
	}
	return b
}

func init() {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print kroscope's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b := currentBuild()
			switch output {
			case "json":
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(b)
			case "", "text":
				fmt.Fprintf(cmd.OutOrStdout(), "kroscope %s", b.Version)
				if b.Commit != "" {
					fmt.Fprintf(cmd.OutOrStdout(), " (commit %.12s", b.Commit)
					if b.Modified {
						fmt.Fprint(cmd.OutOrStdout(), ", modified")
					}
					fmt.Fprint(cmd.OutOrStdout(), ")")
				}
				if b.GoVersion != "" {
					fmt.Fprintf(cmd.OutOrStdout(), " %s", b.GoVersion)
				}
				fmt.Fprintln(cmd.OutOrStdout())
				return nil
			default:
				return fmt.Errorf("unknown --output %q: use text or json", output)
			}
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text or json")
	rootCmd.AddCommand(cmd)

	// As a kubectl plugin (binary named kubectl-kroscope, run as `kubectl
	// kroscope`), help and completion should say so.
	if name := filepath.Base(os.Args[0]); strings.HasPrefix(name, "kubectl-") {
		rootCmd.Annotations = map[string]string{
			cobra.CommandDisplayNameAnnotation: "kubectl " + strings.TrimPrefix(strings.TrimSuffix(name, ".exe"), "kubectl-"),
		}
	}
}
