package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfigCheck(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, bad, "theme: solarized\nascii: maybe\nkeys:\n  requeue: [\"F5\", \"r\"]\n  explode: [\"z\"]\n")
	_, stderr, err := runCmd(t, "config", "check", "--config", bad)
	var ec interface{ ExitCode() int }
	if !errors.As(err, &ec) || ec.ExitCode() != 2 {
		t.Fatalf("err = %v, want exit code 2", err)
	}
	if !strings.HasPrefix(stderr, "3 problems in "+bad+":\n") {
		t.Errorf("stderr does not start with the count:\n%s", stderr)
	}
	for _, want := range []string{bad + `:1: theme: unknown theme "solarized"`, bad + `:2: ascii: "maybe" is not true or false`, bad + ":5: keys.explode: unknown action"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, bad+":4:") {
		t.Errorf("F5 is a valid key:\n%s", stderr)
	}
	good := filepath.Join(dir, "good.yaml")
	writeFile(t, good, "theme: dark\nkeys:\n  requeue: [\"F5\", \"r\"]\n")
	stdout, _, err := runCmd(t, "config", "check", "--config", good)
	if err != nil || !strings.Contains(stdout, good+": ok") {
		t.Fatalf("good config: %v %q", err, stdout)
	}
}

// A config file that does not exist is not "ok" (#38): at the default
// path it is said, and fine (the defaults apply, exit 0); named by
// --config it is an error (exit 1).
func TestConfigCheckMissingFile(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	stdout, _, err := runCmd(t, "config", "check")
	want := filepath.Join(dir, "kroscope", "config.yaml") + " does not exist: the defaults apply\n"
	if err != nil || stdout != want {
		t.Errorf("no file at the default path: %v %q, want %q", err, stdout, want)
	}
	missing := filepath.Join(dir, "typo.yaml")
	stdout, _, err = runCmd(t, "config", "check", "--config", missing)
	if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "--config "+missing+" does not exist") || strings.Contains(stdout, "ok") {
		t.Errorf("--config naming no file: %v %q, want exit status 1 saying so", err, stdout)
	}
}
