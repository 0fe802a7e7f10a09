package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kroscope/kroscope/tui"
)

// configError says a config file has problems (already printed); exit 2,
// like validate.
type configError struct{ n int }

func (e *configError) Error() string {
	if e.n == 1 {
		return "1 problem in the config file"
	}
	return fmt.Sprintf("%d problems in the config file", e.n)
}
func (e *configError) ExitCode() int { return 2 }

// configMissing says that the config file does not exist: an error when
// --config named it (explicit), else only a note that the defaults apply.
func configMissing(cmd *cobra.Command, file string, explicit bool) error {
	if explicit {
		return fmt.Errorf("--config %s does not exist (the UI would start with the defaults)", file)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s does not exist: the defaults apply\n", file)
	return nil
}

// exists reports whether file is there (a file that cannot be read is,
// and CheckConfig says why).
func exists(file string) bool {
	_, err := os.Stat(file)
	return !errors.Is(err, fs.ErrNotExist)
}

func init() {
	var path string
	cfg := &cobra.Command{
		Use:   "config",
		Short: "The terminal UI's config file (theme, ascii, keys)",
	}
	check := &cobra.Command{
		Use:   "check",
		Short: "Check the config file and print each problem with its line",
		Long: `check reads the UI's config file ($XDG_CONFIG_HOME/kroscope/config.yaml, or
--config) and prints how many problems it has, then every problem as FILE:LINE: what
is wrong, the same words the UI's flash line shows when it starts with a
bad file. It exits 2 when there are problems. No file at the default path is
fine (exit 0: the defaults apply); a --config file that does not exist is an
error (exit 1: a typo in a script's path must not pass).

Action names the keys section accepts: ` + strings.Join(tui.ActionNames(), ", ") + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			file, probs := tui.CheckConfig(path)
			if !exists(file) {
				return configMissing(cmd, file, path != "")
			}
			if len(probs) > 0 {
				fmt.Fprint(cmd.ErrOrStderr(), tui.ProblemsReport(file, probs))
				return &configError{len(probs)}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: ok\n", file)
			return nil
		},
	}
	check.Flags().StringVar(&path, "config", "", "config file (default $XDG_CONFIG_HOME/kroscope/config.yaml)")
	cfg.AddCommand(check)
	rootCmd.AddCommand(cfg)
}
